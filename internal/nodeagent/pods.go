package nodeagent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/cache"
)

// Retry back-off of failed pod syncs, in wall-clock time (conflicts are
// retried at once a few times first).
const (
	retryBase             = 5 * time.Millisecond
	retryMax              = 30 * time.Second
	maxImmediateConflicts = 5
	// nodeIndex files bound pods under their node name.
	nodeIndex = "nodeagent.setpoint.dev/node"
)

func nodeIndexFunc(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

// installIndex adds the node index to the pod informer unless present.
func (a *Agent) installIndex() error {
	for _, name := range a.podInf.Indexer().IndexNames() {
		if name == nodeIndex {
			return nil
		}
	}
	return a.podInf.Indexer().AddIndexers(cache.Indexers[*corev1.Pod]{nodeIndex: nodeIndexFunc})
}

// podHandler enqueues the pods of our nodes; n is the node whose own
// informer it listens to (nil: the shared one).
type podHandler struct {
	a *Agent
	n *node
}

func (h podHandler) OnAdd(p *corev1.Pod, _ bool) { h.note(p, true); h.a.enqueue(p) }
func (h podHandler) OnUpdate(old, p *corev1.Pod) { h.a.usageChanged(old, p); h.a.enqueue(p) }
func (h podHandler) OnDelete(p *corev1.Pod, _ bool) {
	h.note(p, false)
	h.a.enqueue(p)
}

func (h podHandler) note(p *corev1.Pod, seen bool) {
	if h.n != nil {
		h.a.notePod(h.n, types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, seen)
	}
}
func (a *Agent) enqueue(p *corev1.Pod) {
	if _, ours := a.byName[p.Spec.NodeName]; ours {
		a.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}

// enqueueNode enqueues every cached pod of the node.
func (a *Agent) enqueueNode(nodeName string) {
	for _, p := range a.podsOf(a.byName[nodeName]) {
		a.enqueue(p)
	}
}

// adoptIPs reserves, before any worker runs, the addresses of the pods an
// earlier incarnation started, so that no new pod gets one of them.
func (a *Agent) adoptIPs() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range a.ordered {
		if n.ipam == nil {
			continue
		}
		for _, p := range a.podsOf(n) {
			if p.Status.PodIP != "" && !isTerminal(p.Status.Phase) {
				n.ipam.reserve(p.UID, p.Status.PodIP)
			}
		}
	}
}

func isTerminal(p corev1.PodPhase) bool { return p == corev1.PodSucceeded || p == corev1.PodFailed }

func (a *Agent) worker(ctx context.Context) {
	for {
		key, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		if ctx.Err() == nil {
			a.process(ctx, key)
		}
		a.queue.Done(key)
	}
}

// process syncs one pod and applies the retry policy.
func (a *Agent) process(ctx context.Context, key types.NamespacedName) {
	after, err := a.sync(ctx, key)
	if err == nil {
		a.retry.Forget(key)
		a.setConflicts(key, 0)
		if after > 0 {
			a.queue.AddAfter(key, after)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	if apierrors.IsConflict(err) && a.setConflicts(key, 1) <= maxImmediateConflicts {
		a.queue.Add(key) // the cache will have caught up
		return
	}
	d := a.retry.When(key)
	a.log.Warn("pod sync failed; retrying", "pod", key, "after", d, "err", err)
	a.retryAfter(d, func() { a.queue.Add(key) })
}

// setConflicts adds delta to the pod's consecutive conflict count (delta
// 0 resets it) and returns the new count.
func (a *Agent) setConflicts(key types.NamespacedName, delta int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	ps := a.sims[key]
	if ps == nil {
		return 0
	}
	if delta == 0 {
		ps.conflicts = 0
	} else {
		ps.conflicts += delta
	}
	return ps.conflicts
}

// forget drops the pod's simulation state and its node's watches of what
// it used, and frees its address.
func (a *Agent) forget(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropLocked(key)
	a.releaseRefsLocked(key)
}

func (a *Agent) dropLocked(key types.NamespacedName) {
	a.setBlockedLocked(key, false)
	if ps := a.sims[key]; ps != nil {
		ps.releaseIP()
		delete(ps.node.sims, key)
		ps.endLogs()
		a.meter.forgetPod(ps.uid, a.clock.Now())
		delete(a.sims, key)
	}
}

// releaseIP returns the pod's address to the node's pool, and the pod no
// longer counts at admission. ps.ip stays: a terminal pod keeps reporting
// the address it had, as in Kubernetes, even after another pod has taken
// it.
func (ps *podState) releaseIP() {
	ps.released = true
	if ps.node.ipam != nil {
		ps.node.ipam.release(ps.uid)
	}
}

// sync moves one pod toward what its simulated containers imply. It
// returns how long until the pod needs another look (0: not before it
// changes).
func (a *Agent) sync(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	pod, n, err := a.podFor(key)
	if apierrors.IsNotFound(err) {
		a.forget(key)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read pod %s: %w", key, err)
	}
	if n == nil || !a.alive(n) {
		return 0, nil // not ours, or a dead kubelet: nothing happens
	}
	view := a.depView(ctx, n, key, pod)
	now := a.clock.Now()
	a.mu.Lock()
	ps := a.sims[key]
	if ps == nil || ps.uid != pod.UID {
		a.dropLocked(key)
		ps = newPodState(pod, n, now, a.opts.RunTime)
		ps.record = !a.opts.DisableEvents
		a.sims[key] = ps
		n.track(key, ps)
	}
	ps.pod = pod
	if pod.DeletionTimestamp != nil {
		wait := ps.stopWait(pod, now, a.opts.StopDelay)
		if wait <= 0 && !ps.stopped {
			ps.stop(ps.stopAt)
			ps.stopped = true
		}
		a.setBlockedLocked(key, false)
		evs := ps.takeEvents()
		a.mu.Unlock()
		a.writeEvents(pod, n, evs)
		if wait > 0 {
			return wait, nil
		}
		return 0, a.deletePod(ctx, n, key, pod.UID)
	}
	if isTerminal(pod.Status.Phase) {
		if !ps.started() && pod.Status.PodIP != "" {
			// ended under an earlier agent: its containers' states
			// and logs are taken over from its status
			ps.admit(pod, now)
			ps.adopt(pod, now, a.opts.RestartBackoff)
		}
		ps.releaseIP()
		a.setBlockedLocked(key, false)
		a.releaseRefsLocked(key)
		a.mu.Unlock()
		return 0, nil
	}
	want, next, evs, err := a.simulateLocked(ps, pod, view, now)
	blocked := ps.blocked()
	a.setBlockedLocked(key, blocked)
	var retry time.Duration
	if blocked && n.reads != nil {
		// A node reads claims and ServiceAccounts by get, never watches
		// them (it may not), and an object watch that failed brings no
		// news: look again after a back-off, as the kubelet retries.
		retry = ps.depRetry(time.Now())
	} else if !blocked {
		ps.depBackoff, ps.depRetryAt = 0, time.Time{}
	}
	a.mu.Unlock()
	if retry > 0 {
		a.retryAfter(retry, func() { a.queue.Add(key) })
	}
	a.writeEvents(pod, n, evs)
	if err != nil || want == nil {
		return next, err
	}
	if !statusEqual(&pod.Status, want) {
		upd := pod.DeepCopy()
		upd.Status = *want
		if _, err := n.api.pods.Namespace(key.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				a.forget(key)
				return 0, nil
			}
			return 0, fmt.Errorf("update status of pod %s: %w", key, err)
		}
	}
	return next, nil
}

// simulateLocked moves the pod's simulation to now and returns the status
// to report (nil: none yet), how long until the pod needs another look
// (0: not before it changes) and the events recorded.
func (a *Agent) simulateLocked(ps *podState, pod *corev1.Pod, view depView, now time.Time) (*corev1.PodStatus, time.Duration, []kubeletEvent, error) {
	if wait, err := a.ensureStartedLocked(ps, pod, view, now); wait > 0 || err != nil {
		return nil, wait, ps.takeEvents(), err
	}
	if ps.rejected() {
		st := ps.rejectedStatus(pod)
		return &st, 0, ps.takeEvents(), nil
	}
	ps.setDeadline(pod, now)
	if !ps.started() { // waiting for a volume, up to the active deadline
		var after time.Duration
		if !ps.deadline.IsZero() {
			if now.Before(ps.deadline) {
				after = ps.deadline.Sub(now)
			} else if ps.failReason == "" {
				ps.failDeadline()
			}
		}
		st := ps.status(pod, now)
		return &st, after, ps.takeEvents(), nil
	}
	ps.startEphemeral(pod, now)
	rc := &runtimeCtx{now: now, backoff: a.opts.RestartBackoff, images: a.images,
		env: func(spec *corev1.Container) string {
			if a.opts.IgnoreMissingDependencies {
				return ""
			}
			return envError(view, pod.Namespace, spec)
		}}
	next := ps.advance(rc)
	st := ps.status(pod, now)
	if isTerminal(st.Phase) {
		ps.releaseIP()
	}
	var after time.Duration
	if !next.IsZero() {
		after = max(next.Sub(now), time.Nanosecond)
	}
	return &st, after, ps.takeEvents(), nil
}

// ensureStartedLocked admits the pod once StartDelay has passed since it
// was first seen (or rejects it: admission.go), makes its sandbox once its
// volumes can be set up (or adopts a pod an earlier agent started). It
// returns the remaining delay, if any.
func (a *Agent) ensureStartedLocked(ps *podState, pod *corev1.Pod, view depView, now time.Time) (time.Duration, error) {
	if ps.started() || ps.rejected() {
		return 0, nil
	}
	if !ps.admitted() {
		if pod.Status.StartTime != nil {
			ps.admit(pod, now) // an earlier agent admitted it
		} else {
			if due := ps.seenAt.Add(a.opts.StartDelay); now.Before(due) {
				return due.Sub(now), nil
			}
			others, err := a.admitLocked(ps, now)
			if err != nil {
				return 0, err
			}
			for _, k := range others {
				a.queue.Add(k) // decided with this one: their status is due
			}
			if ps.rejected() {
				return 0, nil
			}
		}
	}
	if pod.Status.PodIP != "" {
		ps.adopt(pod, now, a.opts.RestartBackoff)
		if ps.node.ipam.reserve(ps.uid, ps.ip) {
			return 0, nil
		}
		ps.ip = "" // held by another pod: take a new address below
	} else {
		msg := ""
		if !a.opts.IgnoreMissingDependencies {
			msg = volumeError(view, pod)
		}
		if msg != "" && msg != ps.mountErr {
			ps.podEvent(corev1.EventTypeWarning, "FailedMount", msg)
		}
		if ps.mountErr = msg; msg != "" {
			return 0, nil
		}
		ps.startSandbox(now)
	}
	ip, err := ps.node.ipam.allocate(ps.uid)
	if err != nil {
		ps.sandboxAt = time.Time{}
		return 0, fmt.Errorf("pod %s/%s on %s: %w", pod.Namespace, pod.Name, ps.node.name, err)
	}
	ps.ip = ip
	return 0, nil
}

// stopWait returns how long the containers of the deleted pod still take
// to stop: min(deletionGracePeriodSeconds, stopDelay) from when the agent
// first saw the deletion.
func (ps *podState) stopWait(pod *corev1.Pod, now time.Time, stopDelay time.Duration) time.Duration {
	if ps.stopAt.IsZero() {
		d := stopDelay
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			d = min(d, time.Duration(*g)*time.Second)
		}
		ps.stopAt = now.Add(max(d, 0))
	}
	return ps.stopAt.Sub(now)
}

// deletePod finishes a graceful deletion as the kubelet does: delete with
// grace period 0, guarded by the pod's uid.
func (a *Agent) deletePod(ctx context.Context, n *node, key types.NamespacedName, uid types.UID) error {
	err := n.api.pods.Namespace(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
	case apierrors.IsConflict(err):
		return nil // another pod of that name by now; its own events follow
	default:
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	a.forget(key)
	return nil
}

// CrashContainer makes a running container of a pod on one of our live
// nodes exit with exitCode now: it records lastState.terminated and is
// restarted after the back-off (restartCount+1) under restartPolicy Always,
// or OnFailure with a non-zero code; otherwise it stays terminated and the
// pod ends Succeeded or Failed once no container runs. It fails for a pod
// the agent does not simulate or a container it does not know.
func (a *Agent) CrashContainer(namespace, pod, container string, exitCode int32) error {
	key := types.NamespacedName{Namespace: namespace, Name: pod}
	a.mu.Lock()
	ps := a.sims[key]
	if ps == nil {
		a.mu.Unlock()
		return fmt.Errorf("nodeagent: pod %s is not running on a simulated node", key)
	}
	c := ps.container(container)
	found := c != nil && c.kind != kindEphemeral
	if found {
		ps.pending[container] = exitCode
	}
	a.mu.Unlock()
	if !found {
		return fmt.Errorf("nodeagent: pod %s has no container %q", key, container)
	}
	a.queue.Add(key)
	return nil
}
