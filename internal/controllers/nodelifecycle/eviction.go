package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// lifecycleTaintKeys are the taints this controller owns.
var lifecycleTaintKeys = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// wantTaints returns the node's taints as the Ready status calls for: the
// other taints of cur, plus key:NoSchedule and key:NoExecute for key
// not-ready (False) or unreachable (Unknown), none for True. A NoExecute
// taint already present keeps its timeAdded; a new one gets now.
func wantTaints(ready corev1.ConditionStatus, cur []corev1.Taint, now time.Time) []corev1.Taint {
	key := ""
	switch ready {
	case corev1.ConditionFalse:
		key = corev1.TaintNodeNotReady
	case corev1.ConditionUnknown:
		key = corev1.TaintNodeUnreachable
	}
	var out []corev1.Taint
	for _, t := range cur {
		if !isLifecycleTaint(t) || t.Key == key {
			out = append(out, t)
		}
	}
	if key == "" {
		return out
	}
	for _, eff := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		if !hasTaint(out, key, eff) {
			t := corev1.Taint{Key: key, Effect: eff}
			if eff == corev1.TaintEffectNoExecute {
				added := metav1.NewTime(now)
				t.TimeAdded = &added
			}
			out = append(out, t)
		}
	}
	return out
}

func isLifecycleTaint(t corev1.Taint) bool {
	for _, k := range lifecycleTaintKeys {
		if t.Key == k {
			return true
		}
	}
	return false
}

func hasTaint(ts []corev1.Taint, key string, eff corev1.TaintEffect) bool {
	for _, t := range ts {
		if t.Key == key && t.Effect == eff {
			return true
		}
	}
	return false
}

// sameTaintKeys reports whether a and b hold the same key/effect pairs.
func sameTaintKeys(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !hasTaint(b, t.Key, t.Effect) {
			return false
		}
	}
	return true
}

func noExecuteTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// evictionTime returns when the pod must leave a node with these NoExecute
// taints: ok=false means never (tolerated forever); a time not after now
// means at once (some taint is not tolerated, or a toleration's seconds
// ran out). The tolerated time counts from each taint's timeAdded. The
// tolerations are the pod's own: the API server's DefaultTolerationSeconds
// admission gave every pod not-ready and unreachable ones (300s) unless it
// had its own.
func (c *Controller) evictionTime(p *corev1.Pod, taints []corev1.Taint, now time.Time) (time.Time, bool) {
	tols := p.Spec.Tolerations
	var at time.Time
	found := false
	for _, taint := range taints {
		start := now
		if taint.TimeAdded != nil {
			start = taint.TimeAdded.Time
		}
		matched, forever := false, false
		var longest time.Duration
		for _, tol := range tols {
			if !nodematch.TolerationMatches(&tol, &taint) {
				continue
			}
			matched = true
			if tol.TolerationSeconds == nil {
				forever = true
				break
			}
			longest = max(longest, time.Duration(max(*tol.TolerationSeconds, 0))*time.Second)
		}
		switch {
		case !matched:
			return now, true
		case forever:
			continue
		}
		if t := start.Add(longest); !found || t.Before(at) {
			at, found = t, true
		}
	}
	return at, found
}

// worker evicts pods whose time on a NoExecute-tainted node ran out.
func (c *Controller) worker(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		if ctx.Err() == nil {
			after, err := c.syncPod(ctx, key)
			switch {
			case err != nil && ctx.Err() == nil:
				c.log.Warn("eviction failed; retrying", "pod", key, "err", err)
				c.queue.AddRateLimited(key)
			case err == nil:
				c.queue.Forget(key)
				if after > 0 {
					c.queue.AddAfter(key, after)
				}
			}
		}
		c.queue.Done(key)
	}
}

// syncPod deletes the pod if its node's NoExecute taints say so now, or
// returns when to look again.
func (c *Controller) syncPod(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	p, err := c.podInf.Lister().Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read pod: %w", err)
	}
	if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
		return 0, nil
	}
	n, err := c.nodeInf.Lister().Get(p.Spec.NodeName)
	if err != nil {
		return 0, nil // node gone: not the taint manager's business
	}
	taints := noExecuteTaints(n)
	if len(taints) == 0 {
		return 0, nil
	}
	now := c.clock.Now()
	at, evict := c.evictionTime(p, taints, now)
	if !evict {
		return 0, nil
	}
	if now.Before(at) {
		return at.Sub(now), nil
	}
	c.podEvents.Eventf(p, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", p.Namespace, p.Name)
	uid := p.UID
	err = c.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, fmt.Errorf("evict pod: %w", err)
	}
	c.log.Info("evicted pod from tainted node", "pod", key, "node", n.Name)
	return 0, nil
}

// nodeHandler queues the pods of nodes whose NoExecute taints change.
type nodeHandler struct{ c *Controller }

func (h nodeHandler) OnAdd(n *corev1.Node, _ bool) {
	if len(noExecuteTaints(n)) > 0 {
		h.c.enqueueNode(n.Name)
	}
}

func (h nodeHandler) OnUpdate(old, n *corev1.Node) {
	if !sameTaintKeys(noExecuteTaints(old), noExecuteTaints(n)) {
		h.c.enqueueNode(n.Name)
	}
}

func (h nodeHandler) OnDelete(*corev1.Node, bool) {}

func (c *Controller) enqueueNode(name string) {
	for _, p := range c.podsOf(name) {
		c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}

// podHandler queues bound pods that sit on a NoExecute-tainted node.
type podHandler struct{ c *Controller }

func (h podHandler) OnAdd(p *corev1.Pod, _ bool) { h.c.enqueuePod(p) }
func (h podHandler) OnUpdate(_, p *corev1.Pod)   { h.c.enqueuePod(p) }
func (h podHandler) OnDelete(*corev1.Pod, bool)  {}
func (c *Controller) enqueuePod(p *corev1.Pod) {
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
		return
	}
	if n, err := c.nodeInf.Lister().Get(p.Spec.NodeName); err == nil && len(noExecuteTaints(n)) > 0 {
		c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}
