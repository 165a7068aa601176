package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// deploymentManifest is a Deployment of app=name with the given replicas and
// image, RollingUpdate 25 % / 25 %, plus extra pod-spec YAML (indented 6).
func deploymentManifest(name string, replicas int, image, extraPodSpec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%%, maxUnavailable: 25%%}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: %[1]s
        image: %[3]s
        resources:
          requests: {cpu: 100m, memory: 64Mi}
%[4]s`, name, replicas, image, extraPodSpec)
}

// rolloutWatch follows the pods of one selector and records the most
// non-terminating pods and the fewest available (Ready, not terminating)
// pods seen at any moment.
type rolloutWatch struct {
	mu                sync.Mutex
	pods              map[string]podView
	maxPods, minAvail int
	events            int
	done              chan struct{}
	err               error
}

type podView struct{ terminating, ready bool }

func watchRollout(t *testing.T, ctx context.Context, c *rest.Client, ns, selector string) *rolloutWatch {
	t.Helper()
	pods := podsOf(c).Namespace(ns)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	w := &rolloutWatch{pods: map[string]podView{}, done: make(chan struct{})}
	for i := range list.Items {
		w.apply(watch.Added, &list.Items[i])
	}
	w.maxPods, w.minAvail = w.counts()
	stream, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	go func() {
		defer close(w.done)
		defer stream.Stop()
		for ev := range stream.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				if ev.Type == watch.Error {
					w.mu.Lock()
					w.err = fmt.Errorf("watch error: %v", ev.Object)
					w.mu.Unlock()
				}
				continue
			}
			w.apply(ev.Type, p)
		}
	}()
	return w
}

func (w *rolloutWatch) apply(typ watch.EventType, p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if typ == watch.Deleted {
		delete(w.pods, p.Name)
	} else {
		w.pods[p.Name] = podView{terminating: p.DeletionTimestamp != nil, ready: podReady(p)}
	}
	n, avail := w.counts()
	w.maxPods = max(w.maxPods, n)
	w.minAvail = min(w.minAvail, avail)
}

// counts returns the non-terminating and the available pods; mu held.
func (w *rolloutWatch) counts() (pods, avail int) {
	for _, v := range w.pods {
		if !v.terminating {
			pods++
			if v.ready {
				avail++
			}
		}
	}
	return pods, avail
}

func (w *rolloutWatch) result() (maxPods, minAvail, events int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxPods, w.minAvail, w.events, w.err
}

// waitRunning waits until exactly want pods of the selector are Running,
// Ready and not terminating, and returns them.
func waitRunning(t *testing.T, c *rest.Client, ns, selector string, want int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, timeout, fmt.Sprintf("%d running pods %s", want, selector), func() string {
		pods = runningPods(t, c, ns, selector)
		if len(pods) != want {
			return fmt.Sprintf("%d running", len(pods))
		}
		return ""
	})
	return pods
}

// TestUpDeploymentRollout is the first scenario on `setpoint up`:
// 20 replicas Running, a rolling update within maxSurge/maxUnavailable as
// seen by an independent watcher, rollout undo, and a deleted pod replaced.
func TestUpDeploymentRollout(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 4)
	out := cl.kubectl(t, "", "get", "nodes", "--no-headers")
	if n := strings.Count(out, " Ready "); n != 4 {
		t.Fatalf("want 4 Ready nodes, got:\n%s", out)
	}
	c := restClient(t, cl.kubeconfig)
	cl.kubectl(t, deploymentManifest("web", 20, "nginx:1.25", ""), "apply", "-f", "-")
	cl.kubectl(t, "", "rollout", "status", "deployment/web", "--timeout=180s")
	pods := waitRunning(t, c, "default", "app=web", 20, 60*time.Second)
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.PodIP == "" || p.Status.StartTime == nil {
			t.Fatalf("pod %s: node %q, IP %q, start time %v", p.Name, p.Spec.NodeName, p.Status.PodIP, p.Status.StartTime)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	w := watchRollout(t, ctx, c, "default", "app=web")
	cl.kubectl(t, "", "set", "image", "deployment/web", "web=nginx:1.27")
	cl.kubectl(t, "", "rollout", "status", "deployment/web", "--timeout=180s")
	pods = waitRunning(t, c, "default", "app=web", 20, 60*time.Second)
	cancel()
	<-w.done
	maxPods, minAvail, events, err := w.result()
	t.Logf("rolling update: %d pod events, at most %d pods, at least %d available", events, maxPods, minAvail)
	if err != nil {
		t.Fatal(err)
	}
	if maxPods > 25 || minAvail < 15 {
		t.Fatalf("rollout left its bounds: at most %d pods (limit 25), at least %d available (limit 15)", maxPods, minAvail)
	}
	if events < 40 {
		t.Fatalf("the watcher saw only %d events: the rollout was not observed", events)
	}
	for _, p := range pods {
		if img := p.Spec.Containers[0].Image; img != "nginx:1.27" {
			t.Fatalf("after set image, pod %s runs %s", p.Name, img)
		}
	}

	cl.kubectl(t, "", "rollout", "undo", "deployment/web")
	cl.kubectl(t, "", "rollout", "status", "deployment/web", "--timeout=180s")
	if img := cl.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); img != "nginx:1.25" {
		t.Fatalf("after rollout undo the template image is %q", img)
	}
	pods = waitRunning(t, c, "default", "app=web", 20, 60*time.Second)
	for _, p := range pods {
		if img := p.Spec.Containers[0].Image; img != "nginx:1.25" {
			t.Fatalf("after undo, pod %s runs %s", p.Name, img)
		}
	}
	history := cl.kubectl(t, "", "rollout", "history", "deployment/web")
	if !strings.Contains(history, "2 ") || !strings.Contains(history, "3 ") {
		t.Fatalf("rollout history lacks revisions 2 and 3:\n%s", history)
	}

	victim := pods[0].Name
	cl.kubectl(t, "", "delete", "pod", victim, "--wait=false")
	eventually(t, 60*time.Second, "deleted pod replaced", func() string {
		now := runningPods(t, c, "default", "app=web")
		for _, p := range now {
			if p.Name == victim {
				return "the deleted pod still runs"
			}
		}
		if len(now) != 20 {
			return fmt.Sprintf("%d running", len(now))
		}
		return ""
	})
}
