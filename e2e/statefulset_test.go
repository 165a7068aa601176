package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// statefulSetManifest is a headless Service and an OrderedReady
// StatefulSet of that name with one volume claim template.
func statefulSetManifest(name string, replicas int, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  clusterIP: None
  selector: {app: %[1]s}
  ports: [{port: 80, name: web}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s
spec:
  serviceName: %[1]s
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: %[1]s
        image: %[3]s
        resources:
          requests: {cpu: 100m, memory: 64Mi}
        volumeMounts: [{name: www, mountPath: /usr/share/nginx/html}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`, name, replicas, image)
}

var ordinalRe = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// ordinalWatch follows the pods of one StatefulSet (by label) and records
// violations of what users rely on: never two pods of one ordinal at once;
// a pod of ordinal i is created only when every lower ordinal has a pod
// that has been Running and Ready (OrderedReady).
type ordinalWatch struct {
	set  string
	mu   sync.Mutex
	live map[int]*ordinalPod
	bad  []string
	err  error
	// created counts the pods created while watched.
	created int
	done    chan struct{}
}

type ordinalPod struct {
	uid       types.UID
	everReady bool
	gone      bool
}

func watchOrdinals(t *testing.T, ctx context.Context, c *rest.Client, ns, set string) *ordinalWatch {
	t.Helper()
	pods := podsOf(c).Namespace(ns)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=" + set})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	w := &ordinalWatch{set: set, live: map[int]*ordinalPod{}, done: make(chan struct{})}
	for i := range list.Items {
		w.apply(watch.Added, &list.Items[i])
	}
	stream, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + set, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	go func() {
		defer close(w.done)
		defer stream.Stop()
		for ev := range stream.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				w.apply(ev.Type, p)
			} else if ev.Type == watch.Error {
				w.mu.Lock()
				w.err = fmt.Errorf("watch error: %v", ev.Object)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *ordinalWatch) apply(typ watch.EventType, p *corev1.Pod) {
	m := ordinalRe.FindStringSubmatch(p.Name)
	if m == nil || m[1] != w.set {
		return
	}
	o, _ := strconv.Atoi(m[2])
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.live[o]
	ready := p.Status.Phase == corev1.PodRunning && podReady(p)
	switch typ {
	case watch.Added:
		if cur != nil && !cur.gone && cur.uid != p.UID {
			w.bad = append(w.bad, fmt.Sprintf("two pods of ordinal %d at once (%s, %s)", o, cur.uid, p.UID))
		}
		for j := 0; j < o; j++ {
			if pj := w.live[j]; pj == nil || pj.gone || !pj.everReady {
				w.bad = append(w.bad, fmt.Sprintf("%s created before %s-%d was Running and Ready", p.Name, w.set, j))
			}
		}
		w.live[o] = &ordinalPod{uid: p.UID, everReady: ready}
		w.created++
	case watch.Modified:
		if cur != nil && cur.uid == p.UID && ready {
			cur.everReady = true
		}
	case watch.Deleted:
		if cur != nil && cur.uid == p.UID {
			cur.gone = true
		}
	}
}

// check fails the test on any violation, or if the watch saw fewer than
// minCreated pods created (it would have proved nothing).
func (w *ordinalWatch) check(t *testing.T, minCreated int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatal(w.err)
	}
	if w.created < minCreated {
		t.Errorf("the watch saw %d pods created, want at least %d", w.created, minCreated)
	}
	for _, b := range w.bad {
		t.Error(b)
	}
}

func statefulSetsOf(c *rest.Client) *rest.Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
	return rest.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c, appsv1.SchemeGroupVersion.WithResource("statefulsets"), true)
}

// checkImages waits until set's pods are exactly ordinals 0..n-1, all
// Running and Ready with image, at the set's update revision.
func checkImages(t *testing.T, c *rest.Client, set string, n int, image string) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%d pods of %s at %s", n, set, image), func() string {
		s, err := statefulSetsOf(c).Namespace("default").Get(context.Background(), set, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		pods := runningPods(t, c, "default", "app="+set)
		if len(pods) != n {
			return fmt.Sprintf("%d running pods", len(pods))
		}
		seen := map[string]bool{}
		for _, p := range pods {
			seen[p.Name] = true
			if p.Spec.Containers[0].Image != image || p.Labels[appsv1.StatefulSetRevisionLabel] != s.Status.UpdateRevision {
				return fmt.Sprintf("pod %s image %s revision %s (update revision %s)", p.Name, p.Spec.Containers[0].Image,
					p.Labels[appsv1.StatefulSetRevisionLabel], s.Status.UpdateRevision)
			}
		}
		for i := range n {
			if !seen[fmt.Sprintf("%s-%d", set, i)] {
				return fmt.Sprintf("no pod %s-%d", set, i)
			}
		}
		return ""
	})
}

// TestStatefulSetLifecycle: the whole life of a StatefulSet with real
// kubectl against `setpoint up`: create, rollout status, scale, update
// with a change cause, rollout history, undo, delete with cascade; a watch
// checks that no ordinal ever has two pods and that pods are created in
// order, each after its predecessors were Ready.
func TestStatefulSetLifecycle(t *testing.T) {
	t.Parallel()
	api := startUp(t, 2)
	c := restClient(t, api.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchOrdinals(t, ctx, c, "default", "web")

	api.kubectl(t, statefulSetManifest("web", 3, "nginx:1.25"), "apply", "-f", "-")
	api.kubectl(t, "", "rollout", "status", "statefulset/web", "--timeout=90s")
	checkImages(t, c, "web", 3, "nginx:1.25")
	pvcs, err := rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c,
		corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvcs.Items) != 3 || pvcs.Items[0].Name != "www-web-0" {
		t.Fatalf("claims %d, first %s", len(pvcs.Items), pvcs.Items[0].Name)
	}

	api.kubectl(t, "", "scale", "statefulset/web", "--replicas=4")
	api.kubectl(t, "", "rollout", "status", "statefulset/web", "--timeout=90s")
	checkImages(t, c, "web", 4, "nginx:1.25")

	api.kubectl(t, "", "annotate", "statefulset/web", "kubernetes.io/change-cause=image 1.27")
	api.kubectl(t, "", "set", "image", "statefulset/web", "web=nginx:1.27")
	out := api.kubectl(t, "", "rollout", "status", "statefulset/web", "--timeout=90s")
	if !strings.Contains(out, "partitioned roll out complete") && !strings.Contains(out, "rolling update complete") {
		t.Fatalf("rollout status said %q", out)
	}
	checkImages(t, c, "web", 4, "nginx:1.27")

	hist := api.kubectl(t, "", "rollout", "history", "statefulset/web")
	if !regexp.MustCompile(`(?m)^1\s+<none>`).MatchString(hist) || !regexp.MustCompile(`(?m)^2\s+image 1\.27`).MatchString(hist) {
		t.Fatalf("rollout history:\n%s", hist)
	}
	detail := api.kubectl(t, "", "rollout", "history", "statefulset/web", "--revision=1")
	if !strings.Contains(detail, "nginx:1.25") {
		t.Fatalf("revision 1 detail:\n%s", detail)
	}

	api.kubectl(t, "", "rollout", "undo", "statefulset/web")
	api.kubectl(t, "", "rollout", "status", "statefulset/web", "--timeout=90s")
	checkImages(t, c, "web", 4, "nginx:1.25")
	hist = api.kubectl(t, "", "rollout", "history", "statefulset/web")
	if !regexp.MustCompile(`(?m)^2\s+`).MatchString(hist) || !regexp.MustCompile(`(?m)^3\s+`).MatchString(hist) ||
		regexp.MustCompile(`(?m)^1\s+`).MatchString(hist) {
		t.Fatalf("history after undo (revision 1 becomes 3):\n%s", hist)
	}

	api.kubectl(t, "", "delete", "statefulset/web", "--cascade=foreground", "--timeout=90s")
	eventually(t, 60*time.Second, "pods and claims of web gone", func() string {
		all, _ := countPods(t, c, "default", "app=web")
		claims, err := rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c,
			corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err.Error()
		}
		if all != 0 || len(claims.Items) != 0 {
			return fmt.Sprintf("%d pods, %d claims", all, len(claims.Items))
		}
		return ""
	})
	cancel()
	<-w.done
	// 3 + 1 (scale) + 4 (update) + 4 (undo).
	w.check(t, 12)
}

// TestKill9ControllerManagerDuringStatefulSetRollout: the controller
// manager is killed with SIGKILL and restarted in the middle of a
// StatefulSet's rolling update, several times; the rollout completes, no
// ordinal ever has two pods, and OrderedReady's order holds throughout.
func TestKill9ControllerManagerDuringStatefulSetRollout(t *testing.T) {
	t.Parallel()
	api := startUp(t, 2, "--no-controller-manager", "--pod-start-delay", "500ms")
	kc := api.kubeconfig
	cm := startControllerManager(t, kc, 0)
	c := restClient(t, kc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchOrdinals(t, ctx, c, "default", "db")

	api.kubectl(t, statefulSetManifest("db", 5, "nginx:1.25"), "apply", "-f", "-")
	api.kubectl(t, "", "rollout", "status", "statefulset/db", "--timeout=120s")
	sets := statefulSetsOf(c).Namespace("default")
	image, midRollout := "", 0
	for round := 1; round <= 4; round++ {
		if s, err := sets.Get(ctx, "db", metav1.GetOptions{}); err != nil || s.Status.CurrentRevision == s.Status.UpdateRevision {
			image = fmt.Sprintf("nginx:1.27-r%d", round)
			api.kubectl(t, "", "set", "image", "statefulset/db", "db="+image)
		}
		time.Sleep(time.Duration(300+rand.IntN(900)) * time.Millisecond)
		if s, err := sets.Get(ctx, "db", metav1.GetOptions{}); err == nil && s.Status.CurrentRevision != s.Status.UpdateRevision {
			midRollout++
		}
		cm.kill9()
		cm = startControllerManager(t, kc, round)
	}
	t.Logf("%d of 4 kills landed in the middle of a rollout; last image %s", midRollout, image)
	if midRollout < 3 {
		t.Fatalf("only %d kills landed mid-rollout: the test did not exercise what it claims", midRollout)
	}
	api.kubectl(t, "", "rollout", "status", "statefulset/db", "--timeout=120s")
	checkImages(t, c, "db", 5, image)
	cancel()
	<-w.done
	w.check(t, 10)
}
