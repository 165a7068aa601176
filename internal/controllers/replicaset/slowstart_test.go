package replicaset

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
)

// TestSlowStartBatchSizes: batches double, run in parallel, and stop at
// the first batch with a failure.
func TestSlowStartBatchSizes(t *testing.T) {
	cases := []struct {
		count, failFrom int // calls with index >= failFrom fail
		wantOK          int
		wantCalls       int
	}{
		{count: 20, failFrom: 1 << 30, wantOK: 20, wantCalls: 20}, // 1+2+4+8+5
		{count: 500, failFrom: 0, wantOK: 0, wantCalls: 1},
		{count: 500, failFrom: 2, wantOK: 2, wantCalls: 3}, // batch 1 ok; batch 2: one fails
		{count: 500, failFrom: 10, wantOK: 10, wantCalls: 15},
	}
	for _, c := range cases {
		var mu sync.Mutex
		calls := 0
		ok, err := slowStartBatch(c.count, 1, func() error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls > c.failFrom {
				return errors.New("rejected")
			}
			return nil
		})
		if ok != c.wantOK || calls != c.wantCalls || (err != nil) != (c.wantOK < c.count) {
			t.Errorf("count %d failFrom %d: ok=%d calls=%d err=%v; want ok=%d calls=%d",
				c.count, c.failFrom, ok, calls, err, c.wantOK, c.wantCalls)
		}
	}
}

// reconcileErrors reads controller_runtime_reconcile_total{result="error"}
// of this controller from the manager's registry.
func (h *harness) reconcileErrors() float64 {
	h.t.Helper()
	mfs, err := h.mgr.Registry().Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "controller") == ControllerName && label(m, "result") == "error" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestSlowStartAgainstRejectingServer: a template whose pods the API
// server rejects (422: an invalid finalizer, which the ReplicaSet's own
// validation does not check) costs one create per sync, not 500; the
// ReplicaFailure condition and FailedCreate events say why; fixing the
// template converges and clears the condition.
func TestSlowStartAgainstRejectingServer(t *testing.T) {
	h := newHarness(t, Options{}, 0)
	rs := newRS("bad", 20)
	rs.Spec.Template.Finalizers = []string{"not a valid finalizer!"}
	h.create(rs)
	h.eventually("ReplicaFailure condition", func() error {
		cur, err := h.rss.Get(t.Context(), "bad", metaGet)
		if err != nil {
			return err
		}
		i := conditionIndex(cur.Status.Conditions, appsv1.ReplicaSetReplicaFailure)
		if i < 0 || cur.Status.Conditions[i].Reason != "FailedCreate" ||
			!strings.Contains(cur.Status.Conditions[i].Message, "finalizer") {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		if h.transport.podPosts.Load() < 3 {
			return fmt.Errorf("only %d create attempts so far", h.transport.podPosts.Load())
		}
		return nil
	})
	h.eventually("FailedCreate events", func() error {
		if ev := h.eventReasons("bad"); ev["FailedCreate"] < 1 {
			return fmt.Errorf("events %v", ev)
		}
		return nil
	})

	// Fix the template: 20 pods and the condition is removed.
	h.mutate("bad", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Finalizers = nil })
	h.waitPods("bad", 20)
	h.eventually("condition removed", func() error {
		cur, err := h.rss.Get(t.Context(), "bad", metaGet)
		if err != nil {
			return err
		}
		if conditionIndex(cur.Status.Conditions, appsv1.ReplicaSetReplicaFailure) >= 0 {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		return nil
	})
	h.stop()
	// Every failed sync made at most one create attempt (a first batch of
	// 1; a sync may also fail on a status conflict without creating); the
	// syncs after the fix made the 20 creates.
	posts, failed := h.transport.podPosts.Load(), h.reconcileErrors()
	if posts-20 < 3 || float64(posts-20) > failed {
		t.Fatalf("%d create attempts, %v failed syncs: want 3 <= attempts-20 <= failed syncs", posts, failed)
	}
}

var metaGet = metav1.GetOptions{}
