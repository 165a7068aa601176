package manager_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Events recorded by a reconciler reach the server, repeats folded into a
// count, and shutdown flushes them.
func TestEventRecorder(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	m := newManager(t, srv.RESTConfig(t), manager.Options{})
	rec, err := m.GetEventRecorderFor("mirror-controller")
	if err != nil {
		t.Fatal(err)
	}
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	addConfigMapController(t, m, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cm, err := cms.Namespace(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return reconcile.Result{}, err
		}
		for range 3 {
			rec.Eventf(cm, corev1.EventTypeNormal, "Mirrored", "mirrored %d keys", len(cm.Data))
		}
		return reconcile.Result{}, nil
	}))
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	if _, err := cms.Namespace("default").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "evented"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := rest.For[*corev1.Event, *corev1.EventList](m.Client(), corev1.SchemeGroupVersion.WithResource("events"), true)
	var got *corev1.Event
	eventually(t, "event with count 3", func() bool {
		list, err := events.Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			e := &list.Items[i]
			if e.InvolvedObject.Name == "evented" && e.Reason == "Mirrored" && e.Count == 3 {
				got = e
				return true
			}
		}
		return false
	})
	if got.Source.Component != "mirror-controller" || got.InvolvedObject.Kind != "ConfigMap" || got.Message != "mirrored 1 keys" {
		t.Fatalf("event = %+v", got)
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}
