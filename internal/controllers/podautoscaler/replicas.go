package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The replica computation of kube-controller-manager's replica calculator,
// as pure functions of the pods, their metrics and the time.

// podMetric is one pod's usage of a resource (milli-units) as the
// resource metrics API reported it.
type podMetric struct {
	value     int64
	timestamp time.Time
	window    time.Duration
}

// tolerances are the usage-ratio bands within which nothing changes.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool { return 1-t.down <= ratio && ratio <= 1+t.up }

// readiness are the two delays that tell a starting pod's cpu apart
// (--horizontal-pod-autoscaler-cpu-initialization-period and
// --horizontal-pod-autoscaler-initial-readiness-delay).
type readiness struct {
	cpuInitialization time.Duration
	initialDelay      time.Duration
}

// podGroups sorts the pods of a target: ready ones counted, unready ones
// (pending, or for cpu not yet ready or whose metric predates readiness),
// missing ones (no metric), ignored ones (deleted or failed).
type podGroups struct {
	ready                    int
	unready, missing, ignore map[string]bool
}

// groupPods classifies pods as kube's replica calculator does.
func groupPods(pods []*corev1.Pod, metrics map[string]podMetric, res corev1.ResourceName, rd readiness, now time.Time) podGroups {
	g := podGroups{unready: map[string]bool{}, missing: map[string]bool{}, ignore: map[string]bool{}}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			g.ignore[p.Name] = true
			continue
		}
		if p.Status.Phase == corev1.PodPending {
			g.unready[p.Name] = true
			continue
		}
		m, ok := metrics[p.Name]
		if !ok {
			g.missing[p.Name] = true
			continue
		}
		if res == corev1.ResourceCPU && cpuUnready(p, m, rd, now) {
			g.unready[p.Name] = true
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready tells whether a pod's cpu sample must not count yet: within
// the initialization period after its start, while it is unready or its
// sample began before it turned ready; after, only while it never became
// ready within the initial readiness delay.
func cpuUnready(p *corev1.Pod, m podMetric, rd readiness, now time.Time) bool {
	var cond *corev1.PodCondition
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			cond = &p.Status.Conditions[i]
		}
	}
	if cond == nil || p.Status.StartTime == nil {
		return true
	}
	start := p.Status.StartTime.Time
	if start.Add(rd.cpuInitialization).After(now) {
		return cond.Status == corev1.ConditionFalse || m.timestamp.Before(cond.LastTransitionTime.Add(m.window))
	}
	return cond.Status == corev1.ConditionFalse && start.Add(rd.initialDelay).After(cond.LastTransitionTime.Time)
}

// podRequests sums each pod's requests of res (milli-units) over its
// containers and restartable init containers, or of one container.
func podRequests(pods []*corev1.Pod, container string, res corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, p := range pods {
		ctrs := append([]corev1.Container{}, p.Spec.Containers...)
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				ctrs = append(ctrs, c)
			}
		}
		var sum int64
		found := false
		for _, c := range ctrs {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Resources.Requests[res]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", res, c.Name, p.Name)
			}
			sum += q.MilliValue()
			found = true
			if container != "" {
				break
			}
		}
		if container != "" && !found {
			return nil, fmt.Errorf("container %s not found in Pod %s", container, p.Name)
		}
		out[p.Name] = sum
	}
	return out, nil
}

// utilizationRatio is the usage over the requests of the pods that have
// both, against the target percentage: the ratio, the utilization (%),
// and the average raw usage.
func utilizationRatio(metrics map[string]podMetric, requests map[string]int64, target int32) (float64, int32, int64, error) {
	var used, requested int64
	n := 0
	for name, m := range metrics {
		r, ok := requests[name]
		if !ok {
			continue
		}
		used += m.value
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	util := int32(used * 100 / requested)
	return float64(util) / float64(target), util, used / int64(n), nil
}

// usageRatio is the average usage against a target average.
func usageRatio(metrics map[string]podMetric, target int64) (float64, int64) {
	var sum int64
	for _, m := range metrics {
		sum += m.value
	}
	avg := sum / int64(len(metrics))
	return float64(avg) / float64(target), avg
}

// ratioFunc computes a usage ratio over metrics (utilization or average
// value).
type ratioFunc func(metrics map[string]podMetric) (float64, error)

// replicaProposal is kube's proposal from a usage ratio: when no pod is
// unready under a rising load and none misses a metric, ceil(ratio × ready)
// outside the tolerance; otherwise the ratio is recomputed with missing
// pods assumed at the fallback (scale-down) or zero (scale-up) and
// unready pods at zero (scale-up), and a change of direction or a ratio
// back within tolerance keeps the current count.
func replicaProposal(current int32, metrics map[string]podMetric, g podGroups, tol tolerances, ratio ratioFunc, fallback func(name string) int64) (int32, error) {
	for name := range g.ignore {
		delete(metrics, name)
	}
	for name := range g.unready {
		delete(metrics, name)
	}
	if len(metrics) == 0 {
		return 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	r, err := ratio(metrics)
	if err != nil {
		return 0, err
	}
	upWithUnready := len(g.unready) > 0 && r > 1
	if !upWithUnready && len(g.missing) == 0 {
		if tol.within(r) {
			return current, nil
		}
		return int32(math.Ceil(r * float64(g.ready))), nil
	}
	for name := range g.missing {
		switch {
		case r < 1:
			metrics[name] = podMetric{value: fallback(name)}
		case r > 1:
			metrics[name] = podMetric{}
		}
	}
	if upWithUnready {
		for name := range g.unready {
			metrics[name] = podMetric{}
		}
	}
	nr, err := ratio(metrics)
	if err != nil {
		return 0, err
	}
	if tol.within(nr) || (r < 1 && nr > 1) || (r > 1 && nr < 1) {
		return current, nil
	}
	proposal := int32(math.Ceil(nr * float64(len(metrics))))
	if (nr < 1 && proposal > current) || (nr > 1 && proposal < current) {
		return current, nil
	}
	return proposal, nil
}

// calc is one Resource or ContainerResource computation: the target's
// pods and their metrics.
type calc struct {
	pods      []*corev1.Pod
	metrics   map[string]podMetric
	res       corev1.ResourceName
	container string
	current   int32
	tol       tolerances
	rd        readiness
	now       time.Time
}

// utilizationReplicas is kube's GetResourceReplicas: the proposal, the
// utilization (%) and the average raw usage of the ready pods.
func (c calc) utilizationReplicas(target int32) (int32, int32, int64, error) {
	if len(c.pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := groupPods(c.pods, c.metrics, c.res, c.rd, c.now)
	for name := range g.ignore {
		delete(c.metrics, name)
	}
	for name := range g.unready {
		delete(c.metrics, name)
	}
	if len(c.metrics) == 0 {
		return 0, 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := podRequests(c.pods, c.container, c.res)
	if err != nil {
		return 0, 0, 0, err
	}
	_, util, raw, err := utilizationRatio(c.metrics, requests, target)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio := func(m map[string]podMetric) (float64, error) {
		r, _, _, err := utilizationRatio(m, requests, target)
		return r, err
	}
	fallback := func(name string) int64 { return requests[name] * int64(max(100, target)) / 100 }
	p, err := replicaProposal(c.current, c.metrics, g, c.tol, ratio, fallback)
	return p, util, raw, err
}

// rawReplicas is kube's GetRawResourceReplicas: the proposal and the
// average usage against an average-value target.
func (c calc) rawReplicas(target int64) (int32, int64, error) {
	if len(c.pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := groupPods(c.pods, c.metrics, c.res, c.rd, c.now)
	for name := range g.ignore {
		delete(c.metrics, name)
	}
	for name := range g.unready {
		delete(c.metrics, name)
	}
	if len(c.metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	_, usage := usageRatio(c.metrics, target)
	ratio := func(m map[string]podMetric) (float64, error) {
		r, _ := usageRatio(m, target)
		return r, nil
	}
	p, err := replicaProposal(c.current, c.metrics, g, c.tol, ratio, func(string) int64 { return target })
	return p, usage, err
}
