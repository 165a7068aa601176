package builder_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/controllerutil"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// mirror keeps a Secret "<name>-copy" holding the data of every ConfigMap
// it reconciles, owned by that ConfigMap.
type mirror struct {
	mgr     *manager.Manager
	cms     *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	secrets *rest.Resource[*corev1.Secret, *corev1.SecretList]

	mu    sync.Mutex
	calls map[string]int
}

func (m *mirror) count(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[name]
}

func (m *mirror) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	m.mu.Lock()
	m.calls[req.Name]++
	m.mu.Unlock()
	cm, err := m.cms.Namespace(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-copy"}}
	_, err = controllerutil.CreateOrUpdate(ctx, m.secrets, s, func() error {
		s.StringData = nil
		s.Data = map[string][]byte{}
		for k, v := range cm.Data {
			s.Data[k] = []byte(v)
		}
		return controllerutil.SetControllerReference(cm, s, m.mgr.Scheme())
	})
	return reconcile.Result{}, err
}

func newManager(t *testing.T, srv *testserver.Server, opts manager.Options) *manager.Manager {
	t.Helper()
	opts.Config = srv.RESTConfig(t)
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := manager.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Client().CloseIdleConnections)
	return m
}

// run starts m and stops it (and checks its error) when the test ends.
func run(t *testing.T, m *manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	select {
	case <-m.Elected():
	case err := <-done:
		t.Fatalf("manager stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("manager not running")
	}
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	testwait.UntilEvery(t, 20*time.Second, 20*time.Millisecond, what, func() error {
		ok, err := cond()
		switch {
		case ok:
			return nil
		case err == nil:
			return testwait.ErrNotYet
		}
		return err
	})
}

func TestForOwnsWatchesConverge(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	mgr := newManager(t, srv, manager.Options{})
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](mgr)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := manager.Resource[*corev1.Secret, *corev1.SecretList](mgr)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := manager.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList](mgr)
	if err != nil {
		t.Fatal(err)
	}
	r := &mirror{mgr: mgr, cms: cms, secrets: secrets, calls: map[string]int{}}
	managed := predicate.Labels(labels.SelectorFromSet(labels.Set{"mirror": "yes"}))
	err = builder.ControllerManagedBy(mgr).
		For(builder.Kind[*corev1.ConfigMap](), managed).
		Owns(builder.Kind[*corev1.Secret]()).
		Watches(builder.Kind[*coordinationv1.Lease]().Map(func(l *coordinationv1.Lease) []reconcile.Request {
			if name := l.Annotations["mirror-of"]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l.Namespace, Name: name}}}
			}
			return nil
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
	if err != nil {
		t.Fatal(err)
	}
	run(t, mgr)
	ctx := context.Background()
	ns := cms.Namespace("default")

	// Filtered out by the For predicate.
	if _, err := ns.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := ns.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web",
		Labels: map[string]string{"mirror": "yes"}}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secretHas := func(want map[string]string) func() (bool, error) {
		return func() (bool, error) {
			s, err := secrets.Namespace("default").Get(ctx, "web-copy", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got := map[string]string{}
			for k, v := range s.Data {
				got[k] = string(v)
			}
			ref := metav1.GetControllerOf(s)
			return maps.Equal(got, want) && ref != nil && ref.UID == cm.UID, nil
		}
	}
	eventually(t, "secret created", secretHas(map[string]string{"a": "1"}))
	if n := r.count("plain"); n != 0 {
		t.Fatalf("unlabelled ConfigMap reconciled %d times", n)
	}
	if _, err := secrets.Namespace("default").Get(ctx, "plain-copy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("secret for the filtered ConfigMap: %v", err)
	}

	// An update of the owner propagates.
	cm.Data = map[string]string{"a": "2", "b": "3"}
	if cm, err = ns.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "secret updated", secretHas(map[string]string{"a": "2", "b": "3"}))

	// Deleting the owned Secret reconciles its owner, which recreates it.
	before := r.count("web")
	old, err := secrets.Namespace("default").Get(ctx, "web-copy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.Namespace("default").Delete(ctx, "web-copy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "secret recreated", func() (bool, error) {
		s, err := secrets.Namespace("default").Get(ctx, "web-copy", metav1.GetOptions{})
		return err == nil && s.UID != old.UID, err
	})
	if r.count("web") <= before {
		t.Fatal("owner not reconciled after its Secret was deleted")
	}

	// A Lease mapped by annotation triggers the ConfigMap it names.
	before = r.count("other")
	if _, err := leases.Namespace("default").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l",
		Annotations: map[string]string{"mirror-of": "other"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "mapped reconcile", func() (bool, error) { return r.count("other") > before, nil })
}

func TestBuilderErrors(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	mgr := newManager(t, srv, manager.Options{})
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if err := builder.ControllerManagedBy(mgr).Complete(r); err == nil {
		t.Fatal("missing For accepted")
	}
	if err := builder.ControllerManagedBy(mgr).For(builder.Kind[*corev1.Pod]()).For(builder.Kind[*corev1.Pod]()).Complete(r); err == nil {
		t.Fatal("For twice accepted")
	}
	if err := builder.ControllerManagedBy(mgr).Watches(builder.Watch{}).For(builder.Kind[*corev1.Pod]()).Complete(r); err == nil {
		t.Fatal("empty Watch accepted")
	}
	// A kind the server does not serve (an alpha version, off by default
	// as on kube-apiserver) fails at Complete, naming it.
	err := builder.ControllerManagedBy(mgr).For(builder.Kind[*coordinationv1.Lease]()).
		Owns(builder.Kind[*coordinationv1alpha2.LeaseCandidate]()).Complete(r)
	if err == nil {
		t.Fatal("unserved kind accepted")
	}
	t.Log(err)
	c, err := builder.ControllerManagedBy(mgr).For(builder.Kind[*corev1.Pod]()).Build(r)
	if err != nil || c.Name() != "pods" {
		t.Fatalf("default name: %v %v", c, errors.Unwrap(err))
	}
}
