package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/setpoint-dev/setpoint/testenv"
)

// krPods lists the pods with the label selector: the running ones (not
// being deleted, phase Running, ready) and the total.
func krPods(t *testing.T, cs *kubernetes.Clientset, ns, selector string) (running []corev1.Pod, total int) {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				running = append(running, p)
			}
		}
	}
	return running, len(pods.Items)
}

// krWaitPods waits until exactly n pods match the selector and all of them
// run.
func krWaitPods(t *testing.T, cs *kubernetes.Clientset, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var running []corev1.Pod
	krEventually(t, 60*time.Second, func() (bool, string) {
		var total int
		running, total = krPods(t, cs, ns, selector)
		return len(running) == n && total == n, fmt.Sprintf("%d pods running of %d, want %d", len(running), total, n)
	})
	return running
}

// TestKubectlScale: kubectl scale changes a Deployment's replicas and the
// pods follow, up and down to zero; --current-replicas is a precondition.
func TestKubectlScale(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	kubectl(t, env, krDeployment("web", 2, "nginx"), "apply", "-f", "-")
	krWaitPods(t, cs, "default", "app=web", 2)

	replicas := func(t *testing.T) string {
		t.Helper()
		return kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas} {.status.availableReplicas}")
	}
	for _, n := range []int{5, 1} {
		if out := kubectl(t, env, "", "scale", "deployment", "web", fmt.Sprintf("--replicas=%d", n)); out != "deployment.apps/web scaled\n" {
			t.Errorf("scale to %d: %q", n, out)
		}
		krWaitPods(t, cs, "default", "app=web", n)
		kubectl(t, env, "", "rollout", "status", "deployment/web", "--timeout=60s")
		if got, want := replicas(t), fmt.Sprintf("%d %d", n, n); got != want {
			t.Errorf("after scale to %d: replicas/available %q, want %q", n, got, want)
		}
	}

	// --current-replicas is checked against the live object.
	r := krFails(t, env, "", "scale", "deployment", "web", "--current-replicas=3", "--replicas=4")
	if r.Stderr != "error: Expected replicas to be 3, was 1\n" {
		t.Errorf("scale with a wrong --current-replicas: %q", r.Stderr)
	}
	if got := replicas(t); got != "1 1" {
		t.Errorf("the refused scale changed replicas: %q", got)
	}
	// So is --resource-version.
	r = krFails(t, env, "", "scale", "deployment", "web", "--resource-version=1", "--replicas=4")
	if !strings.HasPrefix(r.Stderr, "error: Expected resource version to be 1, was ") {
		t.Errorf("scale with a stale --resource-version: %q", r.Stderr)
	}
	if out := kubectl(t, env, "", "scale", "deployment", "web", "--current-replicas=1", "--replicas=3"); out != "deployment.apps/web scaled\n" {
		t.Errorf("scale with the right --current-replicas: %q", out)
	}
	krWaitPods(t, cs, "default", "app=web", 3)

	// -l scales every match; to zero removes every pod.
	kubectl(t, env, krDeployment("api", 1, "nginx"), "apply", "-f", "-")
	out := kubectl(t, env, "", "scale", "deployment", "-l", "tier=front", "--replicas=0")
	if out != "deployment.apps/api scaled\ndeployment.apps/web scaled\n" {
		t.Errorf("scale -l tier=front: %q", out)
	}
	krWaitPods(t, cs, "default", "app=web", 0)
	krWaitPods(t, cs, "default", "app=api", 0)
	krEventually(t, 30*time.Second, func() (bool, string) {
		got := replicas(t)
		return got == "0 ", fmt.Sprintf("replicas/available after scale to 0: %q", got)
	})
}
