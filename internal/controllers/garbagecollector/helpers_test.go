package garbagecollector_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllers/garbagecollector"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

var (
	cmGVR = corev1.SchemeGroupVersion.WithResource("configmaps")
	nsGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
)

type env struct {
	srv *testserver.Server
	c   *rest.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	return &env{srv: srv, c: srv.RESTClient(t)}
}

// runGC starts a collector; the returned function stops it and waits.
func (e *env) runGC(t *testing.T) (stop func()) {
	t.Helper()
	return e.runGCWith(t, garbagecollector.Options{})
}

// runGCWith starts a collector with opts; the returned function stops it
// and waits.
func (e *env) runGCWith(t *testing.T, opts garbagecollector.Options) (stop func()) {
	t.Helper()
	b, err := record.NewBroadcaster(record.Options{Sink: record.NewRESTSink(e.c)})
	if err != nil {
		t.Fatal(err)
	}
	gc := garbagecollector.New(e.c, opts, garbagecollector.Deps{Logger: slog.New(slog.DiscardHandler),
		Recorder: b.NewComponentRecorder("garbage-collector-controller")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gc.Start(ctx) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gc.Start: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("garbage collector did not stop")
		}
		if err := b.Shutdown(context.Background()); err != nil {
			t.Errorf("event broadcaster shutdown: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func (e *env) namespace(t *testing.T, name string) {
	t.Helper()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](e.c, nsGVR, false)
	if _, err := nss.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func (e *env) cms(ns string) *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](e.c, cmGVR, true).Namespace(ns)
}

// ref is an owner reference to a config map.
func ref(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, BlockOwnerDeletion: ptr.To(block)}
}

func (e *env) createCM(t *testing.T, ns, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gc-test": "1"},
		Finalizers: finalizers, OwnerReferences: owners}}
	out, err := e.cms(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return out
}

func (e *env) deleteCM(t *testing.T, ns, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	if err := e.cms(ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("delete configmap %s/%s (%s): %v", ns, name, policy, err)
	}
}

// getCM returns the config map, or nil when it does not exist.
func (e *env) getCM(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := e.cms(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

// eventually polls cond every 20ms until it holds, failing the test with
// cond's last explanation after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwait.UntilEvery(t, timeout, 20*time.Millisecond, "condition", testwait.Check(cond))
}

func (e *env) waitGone(t *testing.T, ns string, names ...string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		for _, n := range names {
			if e.getCM(t, ns, n) != nil {
				return false, fmt.Sprintf("configmap %s/%s still exists", ns, n)
			}
		}
		return true, ""
	})
}

func ownerUIDs(cm *corev1.ConfigMap) []types.UID {
	var out []types.UID
	for _, r := range cm.OwnerReferences {
		out = append(out, r.UID)
	}
	return out
}
