package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// TestComponentRestartsAfterLosingLeadership: the scheduler's Lease taken
// by another holder makes it lose its leadership; the cluster does not
// stop, and the scheduler, started again, leads once the other's Lease
// has expired.
func TestComponentRestartsAfterLosingLeadership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	c, err := Start(ctx, Options{
		APIServer:           controlplane.Options{DataDir: dir, Listen: "127.0.0.1:0", Storage: "memory"},
		NoControllerManager: true,
		Scheduler: controllermanager.SchedulerOptions{Common: controllermanager.Common{Election: controllermanager.Election{
			LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := c.WaitReady(ctx, nil); err != nil {
		t.Fatal(err)
	}
	leases := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](clientOf(t, c.Config), leasesGVR, true)
	holder := func() string {
		l, err := leases.Namespace("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get the scheduler's Lease: %v", err)
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	if got, want := holder(), identity(dir); got != want {
		t.Fatalf("the scheduler's Lease is held by %q, want %q", got, want)
	}
	// Another holder takes the Lease for 3 s.
	l, err := leases.Namespace("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = ptr.To("someone-else")
	l.Spec.LeaseDurationSeconds = ptr.To[int32](3)
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := leases.Namespace("kube-system").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sawOther := false
	testwait.UntilEvery(t, 30*time.Second, 100*time.Millisecond, "the scheduler leading again", func() error {
		h := holder()
		sawOther = sawOther || h == "someone-else"
		if h == identity(dir) && sawOther {
			return nil
		}
		select {
		case <-c.Done():
			t.Fatalf("the cluster stopped after the scheduler lost its leadership: %v", c.Wait())
		default:
		}
		return fmt.Errorf("the Lease is held by %q", h)
	})
	select {
	case <-c.Done():
		t.Fatalf("the cluster stopped: %v", c.Wait())
	default:
	}
}
