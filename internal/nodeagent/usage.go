package nodeagent

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// Simulated resource usage: what each running container of a node
// consumes, as the kubelet's /metrics/resource reports it (metrics.go).
//
// A container uses its requests (cpu, memory) unless the pod's annotations
// say otherwise; the annotations are read live (at each scrape and each
// pod update), so `kubectl annotate pod p setpoint.dev/cpu-usage=900m
// --overwrite` raises the usage from the moment the agent sees it. The
// cpu counter is the integral of the usage over the container's run (a
// restart starts a new counter, as a new container does), the node's the
// sum of its containers' (those that ended included); memory is the
// current working set.
const (
	// AnnotationCPUUsage is the cpu a container uses (a quantity: "250m",
	// "1.5"), one value for every regular and sidecar container or
	// "container=value,…".
	AnnotationCPUUsage = "setpoint.dev/cpu-usage"
	// AnnotationMemoryUsage is the memory working set of a container (a
	// quantity: "64Mi"), same forms.
	AnnotationMemoryUsage = "setpoint.dev/memory-usage"
)

// usageOf returns the container's simulated cpu (in millicores) and
// memory (bytes) usage: the annotation's value, else its requests.
func usageOf(pod *corev1.Pod, c *corev1.Container) (cpuMilli, memBytes int64) {
	cpuMilli = c.Resources.Requests.Cpu().MilliValue()
	memBytes = c.Resources.Requests.Memory().Value()
	if s, ok := knobValue(pod, AnnotationCPUUsage, c.Name, true); ok {
		if q, err := resource.ParseQuantity(s); err == nil && q.Sign() >= 0 {
			cpuMilli = q.MilliValue()
		}
	}
	if s, ok := knobValue(pod, AnnotationMemoryUsage, c.Name, true); ok {
		if q, err := resource.ParseQuantity(s); err == nil && q.Sign() >= 0 {
			memBytes = q.Value()
		}
	}
	return cpuMilli, memBytes
}

// counter integrates a rate that changes at known times: acc core-seconds
// until since, rate millicores from then.
type counter struct {
	acc   float64
	rate  int64
	since time.Time
}

// at returns the integral until now without changing c.
func (c *counter) at(now time.Time) float64 {
	d := now.Sub(c.since)
	if d < 0 {
		d = 0
	}
	return c.acc + float64(c.rate)/1000*d.Seconds()
}

// set moves the counter to now and changes its rate from then on.
func (c *counter) set(now time.Time, rate int64) {
	if now.After(c.since) {
		c.acc = c.at(now)
		c.since = now
	}
	c.rate = rate
}

// ctrKey names one run of one container: a restart is a new counter.
type ctrKey struct {
	uid       types.UID
	container string
	started   time.Time
}

// ctrCounter is one run's counter on its node.
type ctrCounter struct {
	counter
	node string
}

// meter keeps the cpu counters of the agent's containers. A node's counter
// is what its containers that stopped had used (retired) plus its running
// containers' counters, so it is exact and never goes back.
type meter struct {
	mu      sync.Mutex
	ctrs    map[ctrKey]*ctrCounter
	retired map[string]float64
}

func newMeter() *meter {
	return &meter{ctrs: map[ctrKey]*ctrCounter{}, retired: map[string]float64{}}
}

// ctrSample is one running container's usage at a scrape.
type ctrSample struct {
	ns, pod, name string
	started       time.Time
	cpuSeconds    float64
	memBytes      int64
}

// runningCtr is a running container of a pod as the simulation has it.
type runningCtr struct {
	spec    *corev1.Container
	started time.Time
}

// runningLocked lists the running containers (sidecars and regular) of a
// simulated pod. a.mu must be held.
func runningLocked(ps *podState) []runningCtr {
	var out []runningCtr
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		if c.running && c.spec != nil {
			out = append(out, runningCtr{spec: c.spec, started: c.startedAt})
		}
	}
	return out
}

// observe brings the counters of the pod's running containers to now with
// the usage its current annotations give.
func (m *meter) observe(pod *corev1.Pod, ctrs []runningCtr, now time.Time) []ctrSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ctrSample, 0, len(ctrs))
	for _, rc := range ctrs {
		cpu, mem := usageOf(pod, rc.spec)
		k := ctrKey{uid: pod.UID, container: rc.spec.Name, started: rc.started}
		c := m.ctrs[k]
		if c == nil {
			// The usage it has had since it started.
			c = &ctrCounter{counter: counter{since: rc.started, rate: cpu}, node: pod.Spec.NodeName}
			if c.since.After(now) {
				c.since = now
			}
			m.ctrs[k] = c
		}
		c.set(now, cpu)
		out = append(out, ctrSample{ns: pod.Namespace, pod: pod.Name, name: rc.spec.Name, started: rc.started,
			cpuSeconds: c.acc, memBytes: mem})
	}
	return out
}

// retireLocked ends a container's counter at now, adding what it used to
// its node's. m.mu must be held.
func (m *meter) retireLocked(k ctrKey, now time.Time) {
	if c := m.ctrs[k]; c != nil {
		m.retired[c.node] += c.at(now)
		delete(m.ctrs, k)
	}
}

// scrapeNode returns the samples of the node's running containers at now
// and the node's cpu counter; the counters of the node's containers that
// no longer run are retired.
func (a *Agent) scrapeNode(n *node, now time.Time) (samples []ctrSample, nodeCPU float64) {
	type podRun struct {
		pod  *corev1.Pod
		ctrs []runningCtr
	}
	var runs []podRun
	pods := a.podsOf(n)
	a.mu.Lock()
	for _, pod := range pods {
		ps := a.sims[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
		if ps == nil || ps.node != n || ps.stopped || pod.UID != ps.uid || isTerminal(pod.Status.Phase) {
			continue
		}
		if ctrs := runningLocked(ps); len(ctrs) > 0 {
			runs = append(runs, podRun{pod: pod, ctrs: ctrs})
		}
	}
	a.mu.Unlock()
	live := map[ctrKey]bool{}
	for _, r := range runs {
		for _, s := range a.meter.observe(r.pod, r.ctrs, now) {
			samples = append(samples, s)
			live[ctrKey{uid: r.pod.UID, container: s.name, started: s.started}] = true
		}
	}
	m := a.meter
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range m.ctrs {
		if c.node == n.name && !live[k] {
			m.retireLocked(k, now)
		}
	}
	nodeCPU = m.retired[n.name]
	for k, c := range m.ctrs {
		if c.node == n.name && live[k] {
			nodeCPU += c.acc
		}
	}
	return samples, nodeCPU
}

// usageChanged brings the counters of a pod of ours to now when its usage
// annotations changed, so a new usage counts from when the agent saw it
// rather than from the next scrape.
func (a *Agent) usageChanged(old, pod *corev1.Pod) {
	if old.Annotations[AnnotationCPUUsage] == pod.Annotations[AnnotationCPUUsage] &&
		old.Annotations[AnnotationMemoryUsage] == pod.Annotations[AnnotationMemoryUsage] {
		return
	}
	a.observePod(pod)
}

// observePod brings the counters of a pod of ours to now.
func (a *Agent) observePod(pod *corev1.Pod) {
	n := a.byName[pod.Spec.NodeName]
	if n == nil {
		return
	}
	a.mu.Lock()
	ps := a.sims[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
	var ctrs []runningCtr
	if ps != nil && ps.uid == pod.UID {
		ctrs = runningLocked(ps)
	}
	a.mu.Unlock()
	if len(ctrs) > 0 {
		a.meter.observe(pod, ctrs, a.clock.Now())
	}
}

// forgetPod retires the counters of a pod that is gone.
func (m *meter) forgetPod(uid types.UID, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.ctrs {
		if k.uid == uid {
			m.retireLocked(k, now)
		}
	}
}
