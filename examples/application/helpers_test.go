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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/examples/application"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a control plane with the CRD of config/crd.yaml established
// and typed clients; with the operator, also the Application controller
// on a manager.
type fixture struct {
	env         *testenv.Environment
	apps        *rest.Resource[*application.Application, *application.ApplicationList]
	deployments *rest.Resource[*appsv1.Deployment, *appsv1.DeploymentList]
	services    *rest.Resource[*corev1.Service, *corev1.ServiceList]
	events      *rest.Resource[*corev1.Event, *corev1.EventList]
	records     *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
}

// start runs testenv (controllers and two nodes, so pods really run),
// applies config/crd.yaml through the API and waits until it is
// Established; with operator it then runs the operator (one worker) until
// the test ends.
func start(t *testing.T, operator bool) *fixture {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Controllers: operator, Nodes: nodes(operator)})
	client, err := rest.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	applyCRD(t, client)
	f := &fixture{
		env: env,
		apps: rest.For[*application.Application, *application.ApplicationList](client, application.GroupVersionResource, true).
			WithKind(application.GroupVersion.WithKind(application.Kind)).Namespace("default"),
		deployments: rest.For[*appsv1.Deployment, *appsv1.DeploymentList](client, appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace("default"),
		services:    rest.For[*corev1.Service, *corev1.ServiceList](client, corev1.SchemeGroupVersion.WithResource("services"), true).Namespace("default"),
		events:      rest.For[*corev1.Event, *corev1.EventList](client, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace("default"),
		records:     rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace(application.RecordNamespace),
	}
	if operator {
		runOperator(t, env)
	}
	return f
}

func nodes(operator bool) int {
	if operator {
		return 2
	}
	return 0
}

// applyCRD creates the CRD from config/crd.yaml and waits until it is
// Established.
func applyCRD(t *testing.T, client *rest.Client) {
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
	crds := rest.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](client,
		apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), false)
	ctx := context.Background()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	eventually(t, "CRD established", func() string {
		got, err := crds.Get(ctx, application.CRDName, metav1.GetOptions{})
		if err != nil {
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
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := application.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
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
	out, err := f.apps.Create(context.Background(), app, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create application %s: %v", app.Name, err)
	}
	return out
}

// updateApp applies mutate to the live Application, retrying conflicts
// with the operator's writes.
func (f *fixture) updateApp(t *testing.T, name string, mutate func(*application.Application)) *application.Application {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		app, err := f.apps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get application %s: %v", name, err)
		}
		mutate(app)
		out, err := f.apps.Update(ctx, app, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("update application %s: %v", name, err)
		}
	}
	t.Fatalf("update application %s: conflicts 10 times in a row", name)
	return nil
}

// get returns the live object or nil when it does not exist.
func get[T any](t *testing.T, fetch func(context.Context, string, metav1.GetOptions) (*T, error), name string) *T {
	t.Helper()
	obj, err := fetch(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj
}

// waitEvent waits for an Event of the given type and reason about the
// object with uid, whose message contains msg.
func (f *fixture) waitEvent(t *testing.T, uid, eventType, reason, msg string) *corev1.Event {
	return testenv.WaitForEvent(t, f.events, uid, eventType, reason, msg)
}
