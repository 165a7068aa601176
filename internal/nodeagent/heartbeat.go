package nodeagent

import (
	"context"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// kickHeartbeat asks the heartbeat loop for an immediate round.
func (a *Agent) kickHeartbeat() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// heartbeatLoop renews the Leases of live nodes every LeaseRenewInterval
// and checks their status every StatusUpdateFrequency, until ctx ends.
func (a *Agent) heartbeatLoop(ctx context.Context) {
	leaseTick := a.clock.NewTicker(a.opts.LeaseRenewInterval)
	defer leaseTick.Stop()
	statusTick := a.clock.NewTicker(a.opts.StatusUpdateFrequency)
	defer statusTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-leaseTick.C():
			a.forLiveNodes(ctx, a.renewLease)
		case <-statusTick.C():
			a.forLiveNodes(ctx, a.syncStatus)
		case <-a.kick:
			a.forLiveNodes(ctx, a.renewLease)
			a.forLiveNodes(ctx, a.syncStatus)
		}
	}
}

// forLiveNodes runs fn for every node that heartbeats, a few at a time,
// logging failures (the next round retries).
func (a *Agent) forLiveNodes(ctx context.Context, fn func(context.Context, *node) error) {
	sem := make(chan struct{}, registerParallelism)
	var wg sync.WaitGroup
	for _, n := range a.ordered {
		if !a.alive(n) {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, n); err != nil && ctx.Err() == nil {
				a.log.Warn("heartbeat failed", "node", n.name, "err", err)
			}
		})
	}
	wg.Wait()
}

// renewLease sets the node Lease's renewTime to now, creating the Lease
// (owned by the node) when missing.
func (a *Agent) renewLease(ctx context.Context, n *node) error {
	a.mu.Lock()
	l, uid := n.lease, n.uid
	a.mu.Unlock()
	now := metav1.NewMicroTime(a.clock.Now())
	if l == nil {
		got, err := n.api.leases.Get(ctx, n.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return a.createLease(ctx, n, now)
		case err != nil:
			return fmt.Errorf("get lease: %w", err)
		}
		l = got
	}
	upd := l.DeepCopy()
	upd.Spec.HolderIdentity = ptr.To(n.name)
	upd.Spec.LeaseDurationSeconds = ptr.To(int32(a.opts.LeaseDuration.Seconds()))
	upd.Spec.RenewTime = &now
	upd.OwnerReferences = nodeOwner(n.name, uid)
	out, err := n.api.leases.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		a.setLease(n, nil) // re-read next time (conflict, deletion)
		if apierrors.IsNotFound(err) {
			return a.createLease(ctx, n, now)
		}
		return fmt.Errorf("renew lease: %w", err)
	}
	a.setLease(n, out)
	return nil
}

func (a *Agent) createLease(ctx context.Context, n *node, now metav1.MicroTime) error {
	a.mu.Lock()
	uid := n.uid
	a.mu.Unlock()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: LeaseNamespace, OwnerReferences: nodeOwner(n.name, uid)},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(n.name),
			LeaseDurationSeconds: ptr.To(int32(a.opts.LeaseDuration.Seconds())), RenewTime: &now},
	}
	out, err := n.api.leases.Create(ctx, l, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create lease: %w", err)
	}
	a.setLease(n, out)
	return nil
}

func (a *Agent) setLease(n *node, l *coordinationv1.Lease) {
	a.mu.Lock()
	n.lease = l
	a.mu.Unlock()
}

func nodeOwner(name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}}
}

// syncStatus posts the node's status when it differs from what this
// kubelet reports (for example the node lifecycle controller set Ready to
// Unknown) or StatusReportFrequency passed since the last post. A node
// that vanished is registered again.
func (a *Agent) syncStatus(ctx context.Context, n *node) error {
	cur, err := a.nodeObject(n)
	if apierrors.IsNotFound(err) {
		return a.register(ctx, n)
	}
	if err != nil {
		return fmt.Errorf("read node: %w", err)
	}
	a.mu.Lock()
	last := n.lastReport
	a.mu.Unlock()
	now := a.clock.Now()
	want := a.desiredStatus(n, cur.Status, metav1.NewTime(now.Truncate(timeGranularity)))
	if now.Sub(last) < a.opts.StatusReportFrequency && !statusChanged(cur.Status, want) {
		return nil
	}
	return a.postStatus(ctx, n, cur)
}
