package autoservice_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/examples/autoservice"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a control plane with controllers (so the garbage collector
// runs), the auto-service controller on a manager, and a client.
type fixture struct {
	env *testenv.Environment
	// client reads from the server, not a cache, so that a read sees
	// every write before it.
	client client.Client
}

// start runs the environment and the controller (one worker, so requests
// are reconciled in the order they were queued); both stop when the test
// ends, the controller first.
func start(t *testing.T) *fixture {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Controllers: true})
	c, err := client.New(client.Options{Config: env.Config})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env, client: c}
	logs := &testenv.LogBuffer{}
	mgr, err := manager.New(manager.Options{Config: env.Config, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := autoservice.Add(mgr, autoservice.Options{MaxConcurrentReconciles: 1}); err != nil {
		t.Fatal(err)
	}
	testenv.RunManager(t, mgr, logs)
	return f
}

// eventually polls cond every 50 ms until it returns "" or 30 s passed,
// when the test fails with the last reason cond gave.
func eventually(t *testing.T, what string, cond func() string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, what, cond)
}

// deployment is a Deployment of pods app=<name> whose containers have
// the given ports (one container per slice); annotation "" means none.
func deployment(name, annotation string, containerPorts ...[]corev1.ContainerPort) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name, "tier": "web"}},
			},
		},
	}
	if annotation != "" {
		d.Annotations = map[string]string{autoservice.Annotation: annotation}
	}
	if len(containerPorts) == 0 {
		containerPorts = [][]corev1.ContainerPort{nil}
	}
	for i, ports := range containerPorts {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
			corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "nginx:1.25", Ports: ports})
	}
	return d
}

func (f *fixture) create(t *testing.T, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	if err := f.client.Create(context.Background(), d); err != nil {
		t.Fatalf("create deployment %s: %v", d.Name, err)
	}
	return d
}

// setAnnotation sets (or, with value "", removes) the auto-service
// annotation, retrying conflicts with the deployment controller's writes.
func (f *fixture) setAnnotation(t *testing.T, name, value string) {
	t.Helper()
	f.updateDeployment(t, name, func(d *appsv1.Deployment) {
		if value == "" {
			delete(d.Annotations, autoservice.Annotation)
			return
		}
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[autoservice.Annotation] = value
	})
}

func (f *fixture) updateDeployment(t *testing.T, name string, mutate func(*appsv1.Deployment)) {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		d := &appsv1.Deployment{}
		if err := f.client.Get(ctx, key(name), d); err != nil {
			t.Fatalf("get deployment %s: %v", name, err)
		}
		mutate(d)
		if err := f.client.Update(ctx, d); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Fatalf("update deployment %s: %v", name, err)
		}
	}
	t.Fatalf("update deployment %s: conflicts 10 times in a row", name)
}

func (f *fixture) updateService(t *testing.T, name string, mutate func(*corev1.Service)) {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		s := &corev1.Service{}
		if err := f.client.Get(ctx, key(name), s); err != nil {
			t.Fatalf("get service %s: %v", name, err)
		}
		mutate(s)
		if err := f.client.Update(ctx, s); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Fatalf("update service %s: %v", name, err)
		}
	}
	t.Fatalf("update service %s: conflicts 10 times in a row", name)
}

// service returns the Service, or nil when it does not exist.
func (f *fixture) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	s := &corev1.Service{}
	err := f.client.Get(context.Background(), key(name), s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get service %s: %v", name, err)
	}
	return s
}

// waitEvent waits for an Event of the given type and reason about the
// object with uid, whose message contains msg, and returns it.
func (f *fixture) waitEvent(t *testing.T, uid, eventType, reason, msg string) *corev1.Event {
	return testenv.WaitForEvent(t, f.client, "default", uid, eventType, reason, msg)
}

// key names an object of namespace default.
func key(name string) client.ObjectKey { return client.ObjectKey{Namespace: "default", Name: name} }
