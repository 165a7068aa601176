package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlRollout: kubectl rollout status, history (with change
// causes and --revision), undo (to the previous revision and
// --to-revision), restart (every pod replaced, carrying restartedAt),
// pause and resume.
func TestKubectlRollout(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()
	const sel = "app=web"

	status := func(t *testing.T) {
		t.Helper()
		out := kubectl(t, env, "", "rollout", "status", "deployment/web", "--timeout=60s")
		if !strings.HasSuffix(out, "deployment \"web\" successfully rolled out\n") {
			t.Errorf("rollout status: %q", out)
		}
	}
	// history is the revision → change-cause table.
	history := func(t *testing.T) map[string]string {
		t.Helper()
		out := kubectl(t, env, "", "rollout", "history", "deployment/web")
		lines := krLines(out)
		if len(lines) < 2 || lines[0] != "deployment.apps/web " || strings.Join(strings.Fields(lines[1]), " ") != "REVISION CHANGE-CAUSE" {
			t.Fatalf("rollout history:\n%s", out)
		}
		h := map[string]string{}
		for _, l := range lines[2:] {
			f := strings.Fields(l)
			h[f[0]] = strings.Join(f[1:], " ")
		}
		return h
	}
	// images waits until every pod runs image and returns the pod names.
	images := func(t *testing.T, image string) []string {
		t.Helper()
		var names []string
		krEventually(t, 60*time.Second, func() (bool, string) {
			running, total := krPods(t, cs, "default", sel)
			names = nil
			for _, p := range running {
				if p.Spec.Containers[0].Image != image {
					return false, fmt.Sprintf("pod %s runs %s, want %s", p.Name, p.Spec.Containers[0].Image, image)
				}
				names = append(names, p.Name)
			}
			return len(running) == 3 && total == 3, fmt.Sprintf("%d of %d pods running", len(running), total)
		})
		slices.Sort(names)
		return names
	}
	deployment := func(t *testing.T) *appsv1.Deployment {
		t.Helper()
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	setImage := func(t *testing.T, image, cause string) {
		t.Helper()
		if out := kubectl(t, env, "", "set", "image", "deployment/web", "main="+image); out != "deployment.apps/web image updated\n" {
			t.Errorf("set image: %q", out)
		}
		kubectl(t, env, "", "annotate", "deployment", "web", "--overwrite", "kubernetes.io/change-cause="+cause)
		status(t)
	}

	kubectl(t, env, krDeployment("web", 3, "nginx:1.25"), "apply", "-f", "-")
	kubectl(t, env, "", "annotate", "deployment", "web", "kubernetes.io/change-cause=v1.25")
	status(t)
	images(t, "nginx:1.25")
	setImage(t, "nginx:1.26", "v1.26")
	images(t, "nginx:1.26")
	setImage(t, "nginx:1.27", "v1.27")
	images(t, "nginx:1.27")

	t.Run("history", func(t *testing.T) {
		if h := history(t); !maps.Equal(h, map[string]string{"1": "v1.25", "2": "v1.26", "3": "v1.27"}) {
			t.Errorf("history %v", h)
		}
		out := kubectl(t, env, "", "rollout", "history", "deployment/web", "--revision=2")
		if !strings.HasPrefix(out, "deployment.apps/web with revision #2\n") || !strings.Contains(out, "Image:\tnginx:1.26") ||
			!strings.Contains(out, "kubernetes.io/change-cause: v1.26") {
			t.Errorf("history --revision=2:\n%s", out)
		}
		r := krFails(t, env, "", "rollout", "history", "deployment/web", "--revision=9")
		if r.Stderr != "error: unable to find the specified revision\n" {
			t.Errorf("history --revision=9: %q", r.Stderr)
		}
	})

	t.Run("undo", func(t *testing.T) {
		if out := kubectl(t, env, "", "rollout", "undo", "deployment/web"); out != "deployment.apps/web rolled back\n" {
			t.Errorf("undo: %q", out)
		}
		status(t)
		images(t, "nginx:1.26")
		// Revision 2 is rolled forward as revision 4.
		if h := history(t); !maps.Equal(h, map[string]string{"1": "v1.25", "3": "v1.27", "4": "v1.26"}) {
			t.Errorf("history after undo %v", h)
		}
		if d := deployment(t); d.Annotations["deployment.kubernetes.io/revision"] != "4" || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" {
			t.Errorf("after undo: revision %s image %s", d.Annotations["deployment.kubernetes.io/revision"], d.Spec.Template.Spec.Containers[0].Image)
		}
		if out := kubectl(t, env, "", "rollout", "undo", "deployment/web", "--to-revision=1"); out != "deployment.apps/web rolled back\n" {
			t.Errorf("undo --to-revision=1: %q", out)
		}
		status(t)
		images(t, "nginx:1.25")
		if h := history(t); !maps.Equal(h, map[string]string{"3": "v1.27", "4": "v1.26", "5": "v1.25"}) {
			t.Errorf("history after undo --to-revision=1 %v", h)
		}
		r := krFails(t, env, "", "rollout", "undo", "deployment/web", "--to-revision=2")
		if r.Stderr != "error: unable to find specified revision 2 in history\n" {
			t.Errorf("undo to a revision no longer in history: %q", r.Stderr)
		}
		// Every old ReplicaSet is scaled to zero; the current one has 3.
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range rss.Items {
			want := int32(0)
			if rs.Annotations["deployment.kubernetes.io/revision"] == "5" {
				want = 3
			}
			if *rs.Spec.Replicas != want {
				t.Errorf("replicaset %s (revision %s) replicas %d, want %d", rs.Name, rs.Annotations["deployment.kubernetes.io/revision"], *rs.Spec.Replicas, want)
			}
		}
		if len(rss.Items) != 3 {
			t.Errorf("%d replicasets, want 3 (one per template)", len(rss.Items))
		}
	})

	t.Run("restart", func(t *testing.T) {
		before := images(t, "nginx:1.25")
		if out := kubectl(t, env, "", "rollout", "restart", "deployment/web"); out != "deployment.apps/web restarted\n" {
			t.Errorf("restart: %q", out)
		}
		d := deployment(t)
		at := d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"]
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			t.Fatalf("restartedAt %q: %v", at, err)
		}
		status(t)
		after := images(t, "nginx:1.25")
		for _, n := range after {
			if slices.Contains(before, n) {
				t.Errorf("pod %s survived the restart", n)
			}
		}
		running, _ := krPods(t, cs, "default", sel)
		for _, p := range running {
			if p.Annotations["kubectl.kubernetes.io/restartedAt"] != at {
				t.Errorf("pod %s annotations %v, want restartedAt %s", p.Name, p.Annotations, at)
			}
		}
		if h := history(t); len(h) != 4 || h["6"] != "v1.25" {
			t.Errorf("history after restart %v", h)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		if out := kubectl(t, env, "", "rollout", "pause", "deployment/web"); out != "deployment.apps/web paused\n" {
			t.Errorf("pause: %q", out)
		}
		r := krFails(t, env, "", "rollout", "pause", "deployment/web")
		if r.Stderr != "error: deployments.apps \"web\" is already paused\n" {
			t.Errorf("second pause: %q", r.Stderr)
		}
		if !deployment(t).Spec.Paused {
			t.Fatal("spec.paused not set")
		}
		before := images(t, "nginx:1.25")
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		nRS := len(rss.Items)
		kubectl(t, env, "", "set", "image", "deployment/web", "main=nginx:1.28")
		// Paused: the controller observes the new generation but starts no
		// rollout.
		krEventually(t, 30*time.Second, func() (bool, string) {
			d := deployment(t)
			return d.Status.ObservedGeneration == d.Generation, "generation not observed"
		})
		rss, err = cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		if len(rss.Items) != nRS {
			t.Errorf("a paused deployment made a replicaset: %d, was %d", len(rss.Items), nRS)
		}
		if now := images(t, "nginx:1.25"); !slices.Equal(now, before) {
			t.Errorf("pods changed while paused: %v -> %v", before, now)
		}
		r = krFails(t, env, "", "rollout", "undo", "deployment/web")
		if !strings.Contains(r.Stderr, "you cannot rollback a paused deployment") {
			t.Errorf("undo while paused: %q", r.Stderr)
		}
		if out := kubectl(t, env, "", "rollout", "resume", "deployment/web"); out != "deployment.apps/web resumed\n" {
			t.Errorf("resume: %q", out)
		}
		status(t)
		images(t, "nginx:1.28")
		if d := deployment(t); d.Spec.Paused || d.Annotations["deployment.kubernetes.io/revision"] != "7" {
			t.Errorf("after resume: paused %v revision %s", d.Spec.Paused, d.Annotations["deployment.kubernetes.io/revision"])
		}
	})
}
