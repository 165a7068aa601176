package testenv_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ctrlclient "github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T, env *testenv.Environment) *rest.Client {
	t.Helper()
	c, err := rest.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestAPIServerRestartKeepsData: the zero Options serve the API; what was
// written is served again after Restart, on the same address; Stop
// removes the temporary directory.
func TestAPIServerRestartKeepsData(t *testing.T) {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, url := env.DataDir(), env.URL
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client(t, env), corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	ctx := context.Background()
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Restart(); err != nil {
		t.Fatal(err)
	}
	if env.URL != url {
		t.Fatalf("restart moved the server from %s to %s", url, env.URL)
	}
	cms = rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client(t, env), corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	got, err := cms.Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "b" {
		t.Fatalf("after restart: %v %v", got, err)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	// The client retries refused connections: bound the attempt.
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := cms.Get(short, "kept", metav1.GetOptions{}); err == nil {
		t.Fatal("the API still answers after Stop")
	}
	if _, err := testenvDirGone(dir); err != nil {
		t.Fatal(err)
	}
}

// TestClusterRunsDeployment: with nodes, a Deployment becomes available.
func TestClusterRunsDeployment(t *testing.T) {
	env, err := testenv.Start(testenv.Options{Nodes: 2, Storage: testenv.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		start := time.Now()
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
		t.Logf("stop took %v", time.Since(start))
	}()
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](client(t, env), appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace("default")
	replicas := int32(3)
	labels := map[string]string{"app": "web"}
	ctx := context.Background()
	if _, err := deploys.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waited := testwait.UntilEvery(t, 30*time.Second, 20*time.Millisecond, "deployment available", func() error {
		d, err := deploys.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 3 {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	t.Logf("available after %v", waited)
}

// BenchmarkStart is the start-to-ready time of an environment (and its
// stop), API server alone and with controllers and 3 nodes.
//
//	go test -run '^$' -bench Start -benchtime 20x ./testenv
func BenchmarkStart(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts testenv.Options
	}{{"apiserver", testenv.Options{}}, {"cluster-3-nodes", testenv.Options{Nodes: 3}}} {
		b.Run(tc.name, func(b *testing.B) {
			var ready time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				env, err := testenv.Start(tc.opts)
				if err != nil {
					b.Fatal(err)
				}
				ready += time.Since(start)
				if err := env.Stop(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ms-to-ready")
		})
	}
}

// StartT and RunManager: a manager runs a controller against the
// environment during the test and both stop when it ends.
func TestStartTAndRunManager(t *testing.T) {
	var env *testenv.Environment
	var mgrStopped bool
	t.Run("inner", func(t *testing.T) {
		env = testenv.StartT(t, testenv.Options{})
		logs := &testenv.LogBuffer{}
		mgr, err := manager.New(manager.Options{Config: env.Config, MetricsAddr: "0", HealthAddr: "0",
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunManager(t, mgr, logs)
		select {
		case <-mgr.Elected():
		default:
			t.Fatal("RunManager returned before the manager ran")
		}
		t.Cleanup(func() { mgrStopped = true }) // runs first: cleanups are last in, first out
	})
	if !mgrStopped {
		t.Error("cleanups did not run")
	}
	// The environment is stopped: its API server no longer answers.
	c, err := rest.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // refused connections are retried until then
	defer cancel()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	if _, err := cms.Namespace("default").List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the API server still answers after the test ended")
	}
}

// WaitForEvent finds an event about an object by uid, type, reason and
// message; Eventually waits until a condition holds.
func TestWaitForEventAndEventually(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c, err := ctrlclient.New(ctrlclient.Options{Config: env.Config})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = c.Create(context.Background(), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Name: "x", Namespace: "default", UID: "uid-1"},
			Type:           "Warning", Reason: "Broken", Message: "the thing is broken",
		})
	}()
	e := testenv.WaitForEvent(t, c, "default", "uid-1", "Warning", "Broken", "is broken")
	if e.Name != "e1" {
		t.Errorf("event = %+v", e)
	}
	n := 0
	testenv.Eventually(t, 5*time.Second, "third call", func() string {
		if n++; n < 3 {
			return "not yet"
		}
		return ""
	})
}
