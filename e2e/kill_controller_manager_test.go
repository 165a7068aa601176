package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

// startControllerManager runs `setpoint controller-manager` with a short
// Lease, so that a replacement for a killed one leads within seconds.
func startControllerManager(t *testing.T, kubeconfig string, round int) *proc {
	t.Helper()
	p := startProc(t, fmt.Sprintf("controller-manager #%d", round), "controller-manager", "--kubeconfig", kubeconfig,
		"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "500ms")
	p.waitOutput(t, "leading=true", 60*time.Second)
	return p
}

// TestKill9ControllerManagerDuringRollout is the third scenario,
// on `setpoint up --no-controller-manager` and a `setpoint
// controller-manager` process beside it: the controller manager is killed with SIGKILL and restarted 10 times in
// the middle of a rollout; the rollout completes, and no pod is ever
// duplicated (a watcher sees no more than replicas+maxSurge pods) or left
// without its controller.
func TestKill9ControllerManagerDuringRollout(t *testing.T) {
	t.Parallel()
	api := startUp(t, 4, "--no-controller-manager", "--pod-start-delay", "1500ms")
	kc := api.kubeconfig
	cm := startControllerManager(t, kc, 0)
	c := restClient(t, kc)

	api.kubectl(t, deploymentManifest("roll", 20, "nginx:1.25", ""), "apply", "-f", "-")
	api.kubectl(t, "", "rollout", "status", "deployment/roll", "--timeout=180s")
	waitRunning(t, c, "default", "app=roll", 20, 60*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchRollout(t, ctx, c, "default", "app=roll")
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace("default")
	// Each round kills the controller manager in the middle of a rollout:
	// when the previous rollout has completed, a new image starts another.
	image, midRollout := "", 0
	for round := 1; round <= 10; round++ {
		time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		if d, err := deploys.Get(ctx, "roll", metav1.GetOptions{}); err != nil || rolloutDone(d) {
			image = fmt.Sprintf("nginx:1.27-r%d", round)
			api.kubectl(t, "", "set", "image", "deployment/roll", "roll="+image)
			time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
		}
		if d, err := deploys.Get(ctx, "roll", metav1.GetOptions{}); err == nil && !rolloutDone(d) {
			midRollout++
		}
		cm.kill9()
		cm = startControllerManager(t, kc, round)
	}
	t.Logf("%d of 10 kills landed in the middle of a rollout; last image %s", midRollout, image)
	if midRollout < 9 {
		t.Fatalf("only %d kills landed mid-rollout: the test did not exercise what it claims", midRollout)
	}
	api.kubectl(t, "", "rollout", "status", "deployment/roll", "--timeout=180s")
	pods := waitRunning(t, c, "default", "app=roll", 20, 60*time.Second)
	cancel()
	<-w.done
	maxPods, minAvail, _, _ := w.result()
	t.Logf("through the kills: at most %d pods, at least %d available", maxPods, minAvail)
	if maxPods > 25 {
		t.Fatalf("pods were duplicated: %d non-terminating pods at once (replicas 20 + maxSurge 5)", maxPods)
	}

	rsList, err := replicaSetsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=roll"})
	if err != nil {
		t.Fatal(err)
	}
	var newRS string
	for _, rs := range rsList.Items {
		if ref := metav1.GetControllerOf(&rs); ref == nil || ref.Name != "roll" {
			t.Fatalf("replicaset %s has no Deployment controller", rs.Name)
		}
		if rs.Spec.Template.Spec.Containers[0].Image == image {
			newRS = rs.Name
		} else if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 0 {
			t.Fatalf("old replicaset %s still wants %v replicas", rs.Name, rs.Spec.Replicas)
		}
	}
	if newRS == "" {
		t.Fatalf("no replicaset runs %s", image)
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Name != newRS || p.Spec.Containers[0].Image != image {
			t.Fatalf("pod %s: controller %v, image %s (want %s, %s)", p.Name, ref, p.Spec.Containers[0].Image, newRS, image)
		}
	}
	eventually(t, 60*time.Second, "only the 20 new pods left", func() string {
		all, owned := countPods(t, c, "", "")
		if all != 20 || owned != 20 {
			return fmt.Sprintf("%d pods in the cluster, %d owned (want 20, 20)", all, owned)
		}
		return ""
	})
}

// rolloutDone mirrors kubectl rollout status's success rule.
func rolloutDone(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want &&
		s.Replicas == s.UpdatedReplicas && s.AvailableReplicas == s.UpdatedReplicas
}
