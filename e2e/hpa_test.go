package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

const hpaDeploymentManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
      annotations: {setpoint.dev/cpu-usage: 20m}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {cpu: 100m, memory: 64Mi}
`

// scaleWatch follows the Deployment's spec.replicas through a watch and
// checks at every event that it stays within the autoscaler's bounds and
// that no scale-down comes sooner than the stabilization window after a
// scale-up.
type scaleWatch struct {
	mu            sync.Mutex
	minR, maxR    int32
	window        time.Duration
	last          int32
	lastUp        time.Time
	history       []int32
	violations    []string
	bounded, seen bool
}

func (w *scaleWatch) apply(ev watch.Event) {
	d, ok := ev.Object.(*appsv1.Deployment)
	if !ok || d.Spec.Replicas == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, now := *d.Spec.Replicas, time.Now()
	if w.seen && r == w.last {
		return
	}
	if w.bounded && (r < w.minR || r > w.maxR) {
		w.violations = append(w.violations, fmt.Sprintf("replicas %d outside [%d, %d]", r, w.minR, w.maxR))
	}
	if w.seen && r > w.last {
		w.lastUp = now
	}
	if w.seen && r < w.last && now.Sub(w.lastUp) < w.window {
		w.violations = append(w.violations, fmt.Sprintf("scaled down %d → %d %s after a scale-up", w.last, r, now.Sub(w.lastUp)))
	}
	w.last, w.seen = r, true
	w.history = append(w.history, r)
}

// TestUpHorizontalPodAutoscaler: with real kubectl against `setpoint up`,
// `kubectl top` shows the simulated usage; `kubectl autoscale` makes an
// autoscaler that scales the Deployment up when the pods' usage (raised
// with `kubectl annotate`) goes above the target and back down once it
// falls, after the stabilization window, within min and max at every
// step (a watch checks), with kube's events in `kubectl describe`.
func TestUpHorizontalPodAutoscaler(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2, "--horizontal-pod-autoscaler-sync-period=1s", "--horizontal-pod-autoscaler-downscale-stabilization=4s")
	c := restClient(t, cl.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cl.kubectl(t, hpaDeploymentManifest, "apply", "-f", "-")
	cl.kubectl(t, "", "rollout", "status", "deployment/web", "--timeout=60s")
	eventually(t, 20*time.Second, "kubectl top pods", func() string {
		out, errOut, err := cl.kubectlErr(t, "", "top", "pods", "-l", "app=web", "--no-headers")
		if err != nil || !strings.Contains(out, " 20m ") || !strings.Contains(out, "64Mi") {
			return out + errOut
		}
		return ""
	})
	nodes := cl.kubectl(t, "", "top", "nodes", "--no-headers")
	if !strings.Contains(nodes, "node-0") || !strings.Contains(nodes, "node-1") {
		t.Fatalf("kubectl top nodes:\n%s", nodes)
	}

	w := &scaleWatch{minR: 1, maxR: 4, window: 4 * time.Second}
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, appsv1.SchemeGroupVersion.WithResource("deployments"), true)
	wi, err := deploys.Namespace("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev := range wi.ResultChan() {
			w.apply(ev)
		}
	}()
	defer func() { wi.Stop(); <-watchDone }()

	cl.kubectl(t, "", "autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=4")
	w.mu.Lock()
	w.bounded = true
	w.mu.Unlock()
	eventually(t, 20*time.Second, "the autoscaler's first reading", func() string {
		out := cl.kubectl(t, "", "get", "hpa", "web", "--no-headers")
		if !strings.Contains(out, "20%/50%") {
			return out
		}
		return ""
	})

	cl.kubectl(t, "", "annotate", "pods", "-l", "app=web", "setpoint.dev/cpu-usage=200m", "--overwrite")
	eventually(t, 20*time.Second, "scaled up to 4", func() string {
		if r := cl.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); r != "4" {
			return "replicas " + r
		}
		return ""
	})
	describe := cl.kubectl(t, "", "describe", "hpa", "web")
	if !strings.Contains(describe, "New size: 4; reason: cpu resource utilization (percentage of request) above target") {
		t.Errorf("kubectl describe hpa:\n%s", describe)
	}
	cl.kubectl(t, "", "rollout", "status", "deployment/web", "--timeout=60s")

	cl.kubectl(t, "", "annotate", "pods", "-l", "app=web", "setpoint.dev/cpu-usage=20m", "--overwrite")
	eventually(t, 30*time.Second, "scaled back down to 1", func() string {
		if r := cl.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); r != "1" {
			return "replicas " + r
		}
		return ""
	})
	if out := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name=web,reason=SuccessfulRescale", "-o",
		"jsonpath={range .items[*]}{.message}{\"\\n\"}{end}"); !strings.Contains(out, "reason: All metrics below target") {
		t.Errorf("scale-down events:\n%s", out)
	}
	cl.kubectl(t, "", "delete", "hpa", "web")
	if out, _, err := cl.kubectlErr(t, "", "get", "deployment", "web"); err != nil {
		t.Errorf("the Deployment went with its autoscaler: %s", out)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.violations) > 0 {
		t.Errorf("invariants broken: %s (history %v)", strings.Join(w.violations, "; "), w.history)
	}
	t.Logf("replicas seen: %v", w.history)
}
