package manager_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
)

// TestResyncCorrectsASwallowedEvent: a predicate drops the creation event
// of one ConfigMap on purpose, so nothing reconciles it; the next resync,
// one SyncPeriod later on the manager's fake clock, replays every cached
// object and the lost one is reconciled (as is every other, once more):
// level-triggered, without any change to the object.
func TestResyncCorrectsASwallowedEvent(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	clk := clocktesting.NewFakeClock(time.Now())
	const period = 3 * time.Minute
	m := newManager(t, srv.RESTConfig(t), manager.Options{Clock: clk, SyncPeriod: period,
		SyncPeriodJitter: func(d time.Duration) time.Duration { return d }})
	var swallowed atomic.Int32
	loseCreate := predicate.Funcs{CreateFunc: func(e predicate.CreateEvent) bool {
		if e.Object.GetName() == "lost" {
			swallowed.Add(1)
			return false
		}
		return true
	}}
	rec := &recorder{}
	if err := builder.ControllerManagedBy(m).For(builder.Kind[*corev1.ConfigMap](), loseCreate).Complete(rec); err != nil {
		t.Fatal(err)
	}
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"seen", "lost"} {
		if _, err := cms.Namespace("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the create of seen reconciled and that of lost swallowed", func() bool {
		return rec.count("seen") == 1 && swallowed.Load() == 1
	})
	if n := rec.count("lost"); n != 0 {
		t.Fatalf("lost reconciled %d times before any resync", n)
	}

	// Just short of the period nothing happens; at the period the resync
	// replays the cache (as updates, which the predicate lets through).
	clk.Step(period - time.Second)
	clk.Step(time.Second)
	eventually(t, "resync reconciles the lost object", func() bool { return rec.count("lost") == 1 })
	eventually(t, "resync reconciles every cached object", func() bool { return rec.count("seen") == 2 })
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSyncPeriodByResourceOverrides: a resource with its own period of
// zero is never resynced, while the manager's period applies to others.
func TestSyncPeriodByResourceOverrides(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	clk := clocktesting.NewFakeClock(time.Now())
	m := newManager(t, srv.RESTConfig(t), manager.Options{Clock: clk, SyncPeriod: time.Minute,
		SyncPeriodByResource: map[schema.GroupResource]time.Duration{{Resource: "configmaps"}: 0}})
	cmRec, secRec := &recorder{}, &recorder{}
	if err := builder.ControllerManagedBy(m).For(builder.Kind[*corev1.ConfigMap]()).Complete(cmRec); err != nil {
		t.Fatal(err)
	}
	if err := builder.ControllerManagedBy(m).For(builder.Kind[*corev1.Secret]()).Complete(secRec); err != nil {
		t.Fatal(err)
	}
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	ctx := context.Background()
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := manager.Resource[*corev1.Secret, *corev1.SecretList](m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Namespace("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := secs.Namespace("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both created objects reconciled", func() bool { return cmRec.count("c") == 1 && secRec.count("s") == 1 })
	// The default jitter keeps the secrets' period within [54s, 66s).
	clk.Step(66 * time.Second)
	eventually(t, "secrets resynced", func() bool { return secRec.count("s") == 2 })
	// A configmap resync at that step would be queued before the event of a
	// configmap created now, and reconciled before it (one worker).
	if _, err := cms.Namespace("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "barrier"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "barrier reconciled", func() bool { return cmRec.count("barrier") == 1 })
	if n := cmRec.count("c"); n != 1 {
		t.Fatalf("configmap reconciled %d times; its resource has no resync", n)
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHandlerResyncPeriod: a source with a resync period of its own
// (controller.WithResyncPeriod, client-go's AddEventHandlerWithResyncPeriod)
// is replayed at that period although the manager resyncs nothing.
func TestHandlerResyncPeriod(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	clk := clocktesting.NewFakeClock(time.Now())
	m := newManager(t, srv.RESTConfig(t), manager.Options{Clock: clk, SyncPeriod: -1})
	rec := &recorder{}
	c, err := controller.New("own-period", rec, m.ControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	inf, _, err := manager.Informer[*corev1.ConfigMap](m)
	if err != nil {
		t.Fatal(err)
	}
	kind := controller.Kind(inf, "v1 configmaps", handler.Object[*corev1.ConfigMap]())
	if _, err := controller.WithResyncPeriod(kind, -time.Second); err == nil {
		t.Fatal("negative period accepted")
	}
	src, err := controller.WithResyncPeriod(kind, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(src); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Namespace("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "created object reconciled", func() bool { return rec.count("c") == 1 })
	clk.Step(2 * time.Minute)
	eventually(t, "the handler's own resync", func() bool { return rec.count("c") == 2 })
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}
