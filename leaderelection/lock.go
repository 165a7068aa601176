package leaderelection

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

// leasesGVR is the resource the lock lives in.
var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// LeaseLock names the coordination.k8s.io/v1 Lease that candidates compete
// for and the identity this candidate writes into it.
type LeaseLock struct {
	// Namespace and Name locate the Lease; it is created on first acquire.
	Namespace string
	Name      string
	// Identity must be unique among the candidates (a pod name, or host name
	// plus a random suffix). Two candidates sharing an identity both believe
	// they lead.
	Identity string
	// Client talks to the API server. Its Config.Timeout, if any, also bounds
	// lock calls; the elector bounds them by RenewDeadline in any case.
	Client *rest.Client
}

// leaseRecord is what the Lease says about leadership, in the elector's terms.
type leaseRecord struct {
	// HolderIdentity is the leader's identity, or "" when the lease is free.
	HolderIdentity string
	// LeaseDuration is how long candidates must wait, after last seeing the
	// record change, before they may take the lease over.
	LeaseDuration time.Duration
	AcquireTime   time.Time
	RenewTime     time.Time
	// LeaderTransitions counts changes of holder.
	LeaderTransitions int32
}

// leaseClient is the typed accessor of the lock's Lease.
type leaseClient struct {
	lock  *LeaseLock
	lease *rest.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
}

func newLeaseClient(l *LeaseLock) *leaseClient {
	r := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](l.Client, leasesGVR, true)
	return &leaseClient{lock: l, lease: r.Namespace(l.Namespace)}
}

// get reads the Lease; a missing lease is an error for which
// apierrors.IsNotFound holds.
func (c *leaseClient) get(ctx context.Context) (*coordinationv1.Lease, error) {
	l, err := c.lease.Get(ctx, c.lock.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get lease %s/%s: %w", c.lock.Namespace, c.lock.Name, err)
	}
	return l, nil
}

// create writes a new Lease holding rec; a lease created meanwhile by
// another candidate is an error for which apierrors.IsAlreadyExists holds.
func (c *leaseClient) create(ctx context.Context, rec leaseRecord) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.lock.Namespace, Name: c.lock.Name},
		Spec:       recordToSpec(rec),
	}
	out, err := c.lease.Create(ctx, l, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create lease %s/%s: %w", c.lock.Namespace, c.lock.Name, err)
	}
	return out, nil
}

// update replaces the spec of old (whose resourceVersion is the
// precondition) with rec; a lease changed since old was read is an error for
// which apierrors.IsConflict holds.
func (c *leaseClient) update(ctx context.Context, old *coordinationv1.Lease, rec leaseRecord) (*coordinationv1.Lease, error) {
	l := old.DeepCopy()
	l.Spec = recordToSpec(rec)
	out, err := c.lease.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update lease %s/%s: %w", c.lock.Namespace, c.lock.Name, err)
	}
	return out, nil
}

// recordToSpec writes rec as a LeaseSpec. The duration is rounded UP to
// whole seconds: a holder may only promise others a lease at least as long as
// the one it renews against, or its RenewDeadline bound would not protect
// them (client-go truncates; 1.5s would become 1s).
func recordToSpec(rec leaseRecord) coordinationv1.LeaseSpec {
	secs := int32((rec.LeaseDuration + time.Second - 1) / time.Second)
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       &rec.HolderIdentity,
		LeaseDurationSeconds: &secs,
		LeaseTransitions:     &rec.LeaderTransitions,
	}
	if !rec.AcquireTime.IsZero() {
		spec.AcquireTime = &metav1.MicroTime{Time: rec.AcquireTime}
	}
	if !rec.RenewTime.IsZero() {
		spec.RenewTime = &metav1.MicroTime{Time: rec.RenewTime}
	}
	return spec
}

// specToRecord reads a LeaseSpec; absent fields read as zero.
func specToRecord(s *coordinationv1.LeaseSpec) leaseRecord {
	var r leaseRecord
	if s.HolderIdentity != nil {
		r.HolderIdentity = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.LeaseDuration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	if s.AcquireTime != nil {
		r.AcquireTime = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		r.RenewTime = s.RenewTime.Time
	}
	if s.LeaseTransitions != nil {
		r.LeaderTransitions = *s.LeaseTransitions
	}
	return r
}
