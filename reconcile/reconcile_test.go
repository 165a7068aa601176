package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/reconcile"
)

func TestTerminalError(t *testing.T) {
	if reconcile.TerminalError(nil) != nil {
		t.Fatal("TerminalError(nil) must be nil")
	}
	base := errors.New("invalid spec")
	term := reconcile.TerminalError(base)
	if !reconcile.IsTerminal(term) {
		t.Fatal("IsTerminal(TerminalError(err)) = false")
	}
	wrapped := fmt.Errorf("reconcile web: %w", term)
	if !reconcile.IsTerminal(wrapped) {
		t.Fatal("IsTerminal must see through wrapping")
	}
	if !errors.Is(wrapped, base) {
		t.Fatal("errors.Is must reach the original error")
	}
	if reconcile.IsTerminal(base) || reconcile.IsTerminal(nil) {
		t.Fatal("plain errors and nil are not terminal")
	}
	if got := term.Error(); got != "terminal error: invalid spec" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestResultIsZero(t *testing.T) {
	for _, tc := range []struct {
		r    reconcile.Result
		zero bool
	}{
		{reconcile.Result{}, true},
		{reconcile.Result{Requeue: true}, false},
		{reconcile.Result{RequeueAfter: time.Second}, false},
		{reconcile.Result{RequeueAfter: -time.Second}, true},
	} {
		if got := tc.r.IsZero(); got != tc.zero {
			t.Errorf("%+v.IsZero() = %v, want %v", tc.r, got, tc.zero)
		}
	}
}

func TestFunc(t *testing.T) {
	var got reconcile.Request
	var r reconcile.Reconciler = reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		got = req
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	res, err := r.Reconcile(context.Background(), req)
	if err != nil || res.RequeueAfter != time.Minute || got != req {
		t.Fatalf("Reconcile = %+v, %v; saw %v", res, err, got)
	}
}
