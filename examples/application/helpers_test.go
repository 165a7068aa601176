package application_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/examples/application"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a control plane with the CRD of config/crd.yaml established
// and a client; with the operator, also the Application controller on a
// manager.
type fixture struct {
	env *testenv.Environment
	// client reads from the server, not a cache, so that a read sees
	// every write before it; its scheme holds Application.
	client client.Client
}

// start runs testenv (controllers and two nodes, so pods really run),
// applies config/crd.yaml through the API and waits until it is
// Established; with operator it then runs the operator (one worker) until
// the test ends.
func start(t *testing.T, operator bool) *fixture {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Controllers: operator, Nodes: nodes(operator)})
	c, err := client.New(client.Options{Config: env.Config, Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env, client: c}
	f.applyCRD(t)
	if operator {
		runOperator(t, env)
	}
	return f
}

// newScheme is the manager's scheme plus Application.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := application.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func nodes(operator bool) int {
	if operator {
		return 2
	}
	return 0
}

// applyCRD creates the CRD from config/crd.yaml and waits until it is
// Established.
func (f *fixture) applyCRD(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile("config/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, application.CRDManifest()) {
		t.Fatal("CRDManifest differs from config/crd.yaml")
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatalf("config/crd.yaml: %v", err)
	}
	ctx := context.Background()
	if err := f.client.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	eventually(t, "CRD established", func() string {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := f.client.Get(ctx, client.ObjectKey{Name: application.CRDName}, got); err != nil {
			return err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return ""
			}
		}
		return fmt.Sprintf("conditions %+v", got.Status.Conditions)
	})
}

// runOperator runs the operator on a manager whose scheme holds
// Application; it stops when the test ends, before the environment.
func runOperator(t *testing.T, env *testenv.Environment) {
	t.Helper()
	scheme := newScheme(t)
	logs := &testenv.LogBuffer{}
	mgr, err := manager.New(manager.Options{Config: env.Config, Scheme: scheme, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := application.Add(mgr, application.Options{MaxConcurrentReconciles: 1}); err != nil {
		t.Fatal(err)
	}
	testenv.RunManager(t, mgr, logs)
}

// eventually polls cond every 50 ms until it returns "" or 30 s passed,
// when the test fails with the last reason cond gave.
func eventually(t *testing.T, what string, cond func() string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, what, cond)
}

// newApp is an Application in default; replicas or port 0 leave the
// field unset (the server defaults it).
func newApp(name, image string, replicas, port int32) *application.Application {
	app := &application.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       application.ApplicationSpec{Image: image},
	}
	if replicas > 0 {
		app.Spec.Replicas = ptr.To(replicas)
	}
	if port > 0 {
		app.Spec.Port = ptr.To(port)
	}
	return app
}

func (f *fixture) create(t *testing.T, app *application.Application) *application.Application {
	t.Helper()
	if err := f.client.Create(context.Background(), app); err != nil {
		t.Fatalf("create application %s: %v", app.Name, err)
	}
	return app
}

// updateApp applies mutate to the live Application, retrying conflicts
// with the operator's writes.
func (f *fixture) updateApp(t *testing.T, name string, mutate func(*application.Application)) *application.Application {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		app := &application.Application{}
		if err := f.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, app); err != nil {
			t.Fatalf("get application %s: %v", name, err)
		}
		mutate(app)
		err := f.client.Update(ctx, app)
		if err == nil {
			return app
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("update application %s: %v", name, err)
		}
	}
	t.Fatalf("update application %s: conflicts 10 times in a row", name)
	return nil
}

// get returns the live object name of namespace default, or nil when it
// does not exist: get[appsv1.Deployment](t, f, "web").
func get[T any, P interface {
	*T
	client.Object
}](t *testing.T, f *fixture, name string) P {
	t.Helper()
	return getIn[T, P](t, f, client.ObjectKey{Namespace: "default", Name: name})
}

// record returns the live record ConfigMap name, or nil.
func (f *fixture) record(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	return getIn[corev1.ConfigMap](t, f, client.ObjectKey{Namespace: application.RecordNamespace, Name: name})
}

func getIn[T any, P interface {
	*T
	client.Object
}](t *testing.T, f *fixture, key client.ObjectKey) P {
	t.Helper()
	obj := P(new(T))
	err := f.client.Get(context.Background(), key, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return obj
}

// waitEvent waits for an Event of the given type and reason about the
// object with uid, whose message contains msg.
func (f *fixture) waitEvent(t *testing.T, uid, eventType, reason, msg string) *corev1.Event {
	return testenv.WaitForEvent(t, f.client, "default", uid, eventType, reason, msg)
}
