package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlWait: kubectl wait --for=condition=Available on a
// Deployment, --for=delete on a pod, --for=jsonpath on a pod's phase, on
// many objects with -l, and a timeout when the condition never holds.
func TestKubectlWait(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()

	t.Run("condition=Available", func(t *testing.T) {
		kubectl(t, env, krDeployment("web", 3, "nginx"), "apply", "-f", "-")
		out := kubectl(t, env, "", "wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
		if out != "deployment.apps/web condition met\n" {
			t.Errorf("wait: %q", out)
		}
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas != 3 {
			t.Errorf("available %d after the wait", d.Status.AvailableReplicas)
		}
		// =false never holds on an available deployment: a timeout.
		r := krFails(t, env, "", "wait", "--for=condition=Available=false", "deployment/web", "--timeout=1s")
		if r.Stderr != "error: timed out waiting for the condition on deployments/web\n" {
			t.Errorf("wait that times out: %q", r.Stderr)
		}
	})

	t.Run("condition on many with -l", func(t *testing.T) {
		out := kubectl(t, env, "", "wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=60s")
		lines := krLines(out)
		if len(lines) != 3 {
			t.Fatalf("wait on 3 pods: %q", out)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "pod/web-") || !strings.HasSuffix(l, " condition met") {
				t.Errorf("line %q", l)
			}
		}
	})

	t.Run("jsonpath", func(t *testing.T) {
		kubectl(t, env, "", "run", "p", "--image=nginx")
		out := kubectl(t, env, "", "wait", "--for=jsonpath={.status.phase}=Running", "pod/p", "--timeout=60s")
		if out != "pod/p condition met\n" {
			t.Errorf("wait: %q", out)
		}
		if phase := kubectl(t, env, "", "get", "pod", "p", "-o", "jsonpath={.status.phase}"); phase != "Running" {
			t.Errorf("phase %q after the wait", phase)
		}
		r := krFails(t, env, "", "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/p", "--timeout=1s")
		if r.Stderr != "error: timed out waiting for the condition on pods/p\n" {
			t.Errorf("jsonpath that never matches: %q", r.Stderr)
		}
	})

	t.Run("delete", func(t *testing.T) {
		// The wait starts while the pod exists; the delete ends it.
		done := make(chan kubectlResult, 1)
		go func() { done <- kubectlRun(t, env, "", "wait", "--for=delete", "pod/p", "--timeout=60s") }()
		time.Sleep(time.Second)
		select {
		case r := <-done:
			t.Fatalf("wait --for=delete returned while the pod exists: %v %q %q", r.Err, r.Stdout, r.Stderr)
		default:
		}
		kubectl(t, env, "", "delete", "pod", "p", "--wait=false")
		select {
		case r := <-done:
			if r.Err != nil || r.Stdout != "pod/p condition met\n" {
				t.Errorf("wait --for=delete: %v %q %q", r.Err, r.Stdout, r.Stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("wait --for=delete did not return")
		}
		if _, err := cs.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); err == nil {
			t.Error("the pod still exists")
		}
		// On an object already gone, wait --for=delete returns at once.
		r := kubectlRun(t, env, "", "wait", "--for=delete", "pod/p", "--timeout=5s")
		if r.Err != nil {
			t.Errorf("wait --for=delete on a missing pod: %v %q", r.Err, r.Stderr)
		}
	})
}
