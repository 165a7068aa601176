package nodelifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Condition texts, Kubernetes' own.
const (
	reasonUnknown      = "NodeStatusUnknown"
	messageUnknown     = "Kubelet stopped posting node status."
	reasonNeverUpdated = "NodeStatusNeverUpdated"
	messageNeverUpdate = "Kubelet never posted node status."
)

// monitoredConditions are set to Unknown when a node goes silent.
var monitoredConditions = []corev1.NodeConditionType{
	corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// monitorParallelism bounds concurrent node checks.
const monitorParallelism = 16

// monitorNodes checks every node once: health, taints, pods' readiness.
func (c *Controller) monitorNodes(ctx context.Context) {
	nodes, err := c.nodeInf.Lister().List(labels.Everything())
	if err != nil {
		c.log.Error("list nodes", "err", err)
		return
	}
	seen := make(map[string]bool, len(nodes))
	now := c.clock.Now()
	var work []*corev1.Node
	for _, n := range nodes {
		seen[n.Name] = true
		if c.observe(n, now) {
			work = append(work, n)
		} else if c.needsAction(n) {
			work = append(work, n)
		}
	}
	for name := range c.health {
		if !seen[name] {
			delete(c.health, name)
		}
	}
	c.parallel(ctx, work, func(n *corev1.Node) error { return c.handleNode(ctx, n, now) })
	// Ready transitions and pod marking, serially (health is the
	// monitor's alone).
	for _, n := range nodes {
		c.trackReady(ctx, n)
	}
}

// observe updates the node's probe time from its Lease and Ready heartbeat
// and reports whether the grace period has run out (the node must be
// marked Unknown).
func (c *Controller) observe(n *corev1.Node, now time.Time) bool {
	hb := time.Time{}
	if r := condition(n, corev1.NodeReady); r != nil {
		hb = r.LastHeartbeatTime.Time
	}
	renew := time.Time{}
	if l, err := c.leaseInf.Lister().Namespace(LeaseNamespace).Get(n.Name); err == nil && l.Spec.RenewTime != nil {
		renew = l.Spec.RenewTime.Time
	}
	h := c.health[n.Name]
	if h == nil {
		h = &nodeHealth{probe: now, heartbeat: hb, renew: renew}
		c.health[n.Name] = h
	}
	if !hb.Equal(h.heartbeat) || !renew.Equal(h.renew) {
		h.probe, h.heartbeat, h.renew = now, hb, renew
	}
	if now.Before(h.probe.Add(c.opts.NodeMonitorGracePeriod)) {
		return false
	}
	for _, typ := range monitoredConditions {
		if cd := condition(n, typ); cd == nil || cd.Status != corev1.ConditionUnknown {
			return true
		}
	}
	return false
}

// needsAction reports whether the node's taints differ from what its Ready
// condition calls for.
func (c *Controller) needsAction(n *corev1.Node) bool {
	if condition(n, corev1.NodeReady) == nil {
		return false // not posted yet: tainted only once marked Unknown
	}
	want := wantTaints(readyStatus(n), nil, time.Time{})
	return !sameTaintKeys(n.Spec.Taints, want)
}

// handleNode marks an expired node Unknown and then sets its taints.
func (c *Controller) handleNode(ctx context.Context, n *corev1.Node, now time.Time) error {
	h := c.health[n.Name]
	if h != nil && !now.Before(h.probe.Add(c.opts.NodeMonitorGracePeriod)) {
		updated, err := c.markUnknown(ctx, n, now)
		if err != nil {
			return err
		}
		n = updated
	}
	return c.syncTaints(ctx, n, now)
}

// markUnknown sets the monitored conditions to Unknown through the status
// subresource, keeping their heartbeat times.
func (c *Controller) markUnknown(ctx context.Context, n *corev1.Node, now time.Time) (*corev1.Node, error) {
	upd := n.DeepCopy()
	t := metav1.NewTime(now)
	changed := false
	for _, typ := range monitoredConditions {
		cd := condition(upd, typ)
		if cd == nil {
			upd.Status.Conditions = append(upd.Status.Conditions, corev1.NodeCondition{Type: typ,
				Status: corev1.ConditionUnknown, Reason: reasonNeverUpdated, Message: messageNeverUpdate,
				LastHeartbeatTime: t, LastTransitionTime: t})
			changed = true
			continue
		}
		if cd.Status != corev1.ConditionUnknown {
			cd.Status, cd.Reason, cd.Message, cd.LastTransitionTime = corev1.ConditionUnknown, reasonUnknown, messageUnknown, t
			changed = true
		}
	}
	if !changed {
		return n, nil
	}
	out, err := c.nodes.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("mark node %s unknown: %w", n.Name, err)
	}
	c.log.Info("node stopped posting status", "node", n.Name)
	return out, nil
}

// syncTaints puts the not-ready or unreachable NoSchedule and NoExecute
// taints on a node whose Ready is False or Unknown, and removes them from
// a Ready one. Other taints are kept.
func (c *Controller) syncTaints(ctx context.Context, n *corev1.Node, now time.Time) error {
	if condition(n, corev1.NodeReady) == nil {
		return nil
	}
	want := wantTaints(readyStatus(n), n.Spec.Taints, now)
	if sameTaintKeys(n.Spec.Taints, want) {
		return nil
	}
	upd := n.DeepCopy()
	upd.Spec.Taints = want
	if _, err := c.nodes.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("taint node %s: %w", n.Name, err)
	}
	c.log.Info("node taints updated", "node", n.Name, "ready", readyStatus(n), "taints", len(want))
	return nil
}

// trackReady records Ready transitions: on True → not True it emits
// NodeNotReady and marks the node's pods not ready (retried each pass until
// it succeeds, while the node stays not ready).
func (c *Controller) trackReady(ctx context.Context, cached *corev1.Node) {
	h := c.health[cached.Name]
	if h == nil {
		return
	}
	n := cached
	if fresh, err := c.nodeInf.Lister().Get(cached.Name); err == nil {
		n = fresh
	}
	st := readyStatus(n)
	if st != corev1.ConditionTrue && h.ready == corev1.ConditionTrue {
		c.nodeEvents.Eventf(n, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", n.Name)
		h.markPods = true
	}
	if st == corev1.ConditionTrue {
		h.markPods = false
	}
	// Until the informer shows our own Unknown write, st is still the
	// old value: h.ready follows what the cache shows.
	h.ready = st
	if h.markPods {
		if err := c.markPodsNotReady(ctx, n.Name); err != nil {
			c.log.Warn("mark pods not ready", "node", n.Name, "err", err)
			return
		}
		h.markPods = false
	}
}

// markPodsNotReady sets Ready=False on every pod of the node whose Ready
// is True, as Kubernetes' MarkPodsNotReady.
func (c *Controller) markPodsNotReady(ctx context.Context, node string) error {
	now := metav1.NewTime(c.clock.Now())
	var todo []*corev1.Pod
	for _, p := range c.podsOf(node) {
		if cd := podCondition(p, corev1.PodReady); cd != nil && cd.Status == corev1.ConditionTrue {
			todo = append(todo, p)
		}
	}
	return c.parallelPods(ctx, todo, func(p *corev1.Pod) error {
		upd := p.DeepCopy()
		cd := podCondition(upd, corev1.PodReady)
		cd.Status, cd.LastTransitionTime, cd.Reason, cd.Message = corev1.ConditionFalse, now, "", ""
		_, err := c.pods.Namespace(p.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mark pod %s/%s not ready: %w", p.Namespace, p.Name, err)
		}
		c.podEvents.Eventf(p, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
		return nil
	})
}

// parallel runs fn for each node, a few at a time, logging failures (the
// next pass retries).
func (c *Controller) parallel(ctx context.Context, nodes []*corev1.Node, fn func(*corev1.Node) error) {
	sem := make(chan struct{}, monitorParallelism)
	var wg sync.WaitGroup
	for _, n := range nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(n); err != nil && ctx.Err() == nil {
				c.log.Warn("node health update failed", "node", n.Name, "err", err)
			}
		})
	}
	wg.Wait()
}

// parallelPods runs fn for each pod, a few at a time, and returns the
// first error.
func (c *Controller) parallelPods(ctx context.Context, pods []*corev1.Pod, fn func(*corev1.Pod) error) error {
	sem := make(chan struct{}, monitorParallelism)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, p := range pods {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(p); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// readyStatus is the node's Ready status, Unknown when it has none.
func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	if cd := condition(n, corev1.NodeReady); cd != nil {
		return cd.Status
	}
	return corev1.ConditionUnknown
}
