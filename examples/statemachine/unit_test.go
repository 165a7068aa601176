package statemachine_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/fake"
	"github.com/setpoint-dev/setpoint/examples/statemachine"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestUnitPhases: on a fake client and a fake clock, a Database goes
// Pending → Provisioning → Running (the finalizer added first), and, once
// deleted, Terminating → gone after the teardown time.
func TestUnitPhases(t *testing.T) {
	s, err := rest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := dbv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	db := &dbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orders", Generation: 1},
		Spec: dbv1.DatabaseSpec{Engine: "postgres", StorageGB: 10}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(db).WithStatusSubresource(&dbv1.Database{}).Build()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	r, err := statemachine.New(c, c, clk, &record.FakeRecorder{}, slog.New(slog.DiscardHandler),
		statemachine.Options{ProvisionTime: 2 * time.Second, TeardownTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "orders"}}
	step := func(want dbv1.Phase) reconcile.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatalf("reconcile toward %s: %v", want, err)
		}
		got := &dbv1.Database{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != want {
			t.Fatalf("phase %q, want %q", got.Status.Phase, want)
		}
		return res
	}
	step(dbv1.PhasePending)
	if res := step(dbv1.PhaseProvisioning); res.RequeueAfter != 2*time.Second {
		t.Errorf("provisioning requeues after %s, want 2s", res.RequeueAfter)
	}
	if res := step(dbv1.PhaseProvisioning); res.RequeueAfter != 2*time.Second {
		t.Errorf("before the provision time: requeue after %s", res.RequeueAfter)
	}
	clk.Step(2 * time.Second)
	step(dbv1.PhaseRunning)

	cur := &dbv1.Database{}
	if err := c.Get(ctx, req.NamespacedName, cur); err != nil {
		t.Fatal(err)
	}
	if len(cur.Finalizers) != 1 || cur.Finalizers[0] != statemachine.Finalizer {
		t.Fatalf("finalizers %v", cur.Finalizers)
	}
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	step(dbv1.PhaseTerminating)
	clk.Step(time.Second)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cur), &dbv1.Database{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Database outlived its teardown: %v", err)
	}
}
