package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlDryRunServer: --dry-run=server on create, apply, patch,
// label, scale, replace and delete: the server runs the whole request
// (defaulting, validation, the response object) and changes nothing;
// kubectl prints "(server dry run)".
func TestKubectlDryRunServer(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()
	kubectl(t, env, krDeployment("web", 2, "nginx:1.25"), "apply", "-f", "-")
	kubectl(t, env, "", "rollout", "status", "deployment/web", "--timeout=60s")
	// Let the controllers settle, then take the state every dry run must
	// leave alone.
	time.Sleep(500 * time.Millisecond)
	live := func(t *testing.T) *appsv1.Deployment {
		t.Helper()
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := live(t)
	unchanged := func(t *testing.T) {
		t.Helper()
		if d := live(t); d.ResourceVersion != before.ResourceVersion || *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
			t.Errorf("a dry run changed the deployment: resourceVersion %s -> %s, replicas %d, image %s",
				before.ResourceVersion, d.ResourceVersion, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
		}
	}
	notFound := func(t *testing.T, args ...string) {
		t.Helper()
		if r := kubectlRun(t, env, "", append([]string{"get"}, args...)...); r.Err == nil || !strings.Contains(r.Stderr, "NotFound") {
			t.Errorf("get %v after a dry-run create: %v %s", args, r.Err, r.Stdout)
		}
	}

	t.Run("create", func(t *testing.T) {
		if out := kubectl(t, env, "", "create", "configmap", "dr", "--from-literal=a=b", "--dry-run=server"); out != "configmap/dr created (server dry run)\n" {
			t.Errorf("create: %q", out)
		}
		notFound(t, "configmap", "dr")
		// The answer is the object as it would be stored: defaulted, with
		// a uid and creationTimestamp, but no resourceVersion.
		var d appsv1.Deployment
		krJSON(t, env, &d, "create", "deployment", "new", "--image=nginx", "--replicas=4", "--dry-run=server", "-o", "json")
		if d.Name != "new" || d.UID == "" || d.CreationTimestamp.IsZero() || d.ResourceVersion != "" || *d.Spec.Replicas != 4 ||
			d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Template.Spec.Containers[0].TerminationMessagePath != "/dev/termination-log" {
			t.Errorf("dry-run create answer: %+v %+v", d.ObjectMeta, d.Spec)
		}
		notFound(t, "deployment", "new")
		if rss, _ := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=new"}); len(rss.Items) != 0 {
			t.Error("a dry-run deployment got a replicaset")
		}
		// Validation runs.
		r := krFails(t, env, "", "create", "deployment", "bad", "--image=nginx", "--replicas=-1", "--dry-run=server")
		if !strings.Contains(r.Stderr, "spec.replicas") || !strings.Contains(r.Stderr, "Invalid value: -1") {
			t.Errorf("invalid dry-run create: %q", r.Stderr)
		}
		// And so does the existence check.
		r = krFails(t, env, "", "create", "deployment", "web", "--image=nginx", "--dry-run=server")
		if r.Stderr != "error: failed to create deployment: deployments.apps \"web\" already exists\n" {
			t.Errorf("dry-run create of an existing name: %q", r.Stderr)
		}
	})

	t.Run("apply", func(t *testing.T) {
		if out := kubectl(t, env, krDeployment("fresh", 1, "nginx"), "apply", "--dry-run=server", "-f", "-"); out != "deployment.apps/fresh created (server dry run)\n" {
			t.Errorf("apply of a new object: %q", out)
		}
		notFound(t, "deployment", "fresh")
		// web was applied, so apply computes a patch; the answer has the
		// patched spec at the live resourceVersion.
		out := kubectl(t, env, krDeployment("web", 3, "nginx:1.26"), "apply", "--dry-run=server", "-o", "json", "-f", "-")
		var d appsv1.Deployment
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || d.ResourceVersion != before.ResourceVersion ||
			!strings.Contains(d.Annotations[lastApplied], `"image":"nginx:1.26"`) {
			t.Errorf("dry-run apply answer: replicas %d image %s resourceVersion %s (live %s)",
				*d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.ResourceVersion, before.ResourceVersion)
		}
		unchanged(t)
		if out := kubectl(t, env, krDeployment("web", 3, "nginx:1.26"), "apply", "--dry-run=server", "-f", "-"); out != "deployment.apps/web configured (server dry run)\n" {
			t.Errorf("apply of a changed object: %q", out)
		}
		unchanged(t)
	})

	t.Run("patch, label, annotate, scale, set image, replace", func(t *testing.T) {
		var d appsv1.Deployment
		krJSON(t, env, &d, "patch", "deployment", "web", "--type", "merge", "-p", `{"spec":{"replicas":7}}`, "--dry-run=server", "-o", "json")
		if *d.Spec.Replicas != 7 || d.ResourceVersion != before.ResourceVersion || d.Generation != before.Generation+1 {
			t.Errorf("dry-run patch answer: replicas %d resourceVersion %s (live %s) generation %d (live %d)",
				*d.Spec.Replicas, d.ResourceVersion, before.ResourceVersion, d.Generation, before.Generation)
		}
		unchanged(t)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"label", "deployment", "web", "x=y"}, "deployment.apps/web labeled (server dry run)\n"},
			{[]string{"annotate", "deployment", "web", "x=y"}, "deployment.apps/web annotated (server dry run)\n"},
			{[]string{"scale", "deployment", "web", "--replicas=9"}, "deployment.apps/web scaled (server dry run)\n"},
			{[]string{"set", "image", "deployment/web", "main=nginx:2"}, "deployment.apps/web image updated (server dry run)\n"},
		} {
			if out := kubectl(t, env, "", append(c.args, "--dry-run=server")...); out != c.want {
				t.Errorf("%v: %q, want %q", c.args, out, c.want)
			}
			unchanged(t)
		}
		if out := kubectl(t, env, krDeployment("web", 5, "nginx:1.25"), "replace", "--dry-run=server", "-f", "-"); out != "deployment.apps/web replaced (server dry run)\n" {
			t.Errorf("replace: %q", out)
		}
		unchanged(t)
		if d := live(t); d.Labels["x"] != "" || d.Annotations["x"] != "" {
			t.Errorf("dry-run label/annotate wrote: %v %v", d.Labels, d.Annotations)
		}
	})

	t.Run("delete", func(t *testing.T) {
		pods, _ := krPods(t, cs, "default", "app=web")
		if out := kubectl(t, env, "", "delete", "deployment", "web", "--dry-run=server"); out != "deployment.apps \"web\" deleted (server dry run)\n" {
			t.Errorf("delete: %q", out)
		}
		unchanged(t)
		if d := live(t); d.DeletionTimestamp != nil {
			t.Error("dry-run delete marked the deployment")
		}
		if out := kubectl(t, env, "", "delete", "pod", pods[0].Name, "--dry-run=server"); out != "pod \""+pods[0].Name+"\" deleted (server dry run)\n" {
			t.Errorf("delete pod: %q", out)
		}
		var p corev1.Pod
		krJSON(t, env, &p, "get", "pod", pods[0].Name, "-o", "json")
		if p.DeletionTimestamp != nil || p.UID != pods[0].UID {
			t.Error("dry-run delete of a pod deleted it")
		}
		time.Sleep(500 * time.Millisecond)
		if now, total := krPods(t, cs, "default", "app=web"); len(now) != 2 || total != 2 {
			t.Errorf("pods after dry-run deletes: %d running of %d", len(now), total)
		}
		r := krFails(t, env, "", "delete", "configmap", "missing", "--dry-run=server")
		if r.Stderr != "Error from server (NotFound): configmaps \"missing\" not found\n" {
			t.Errorf("dry-run delete of a missing object: %q", r.Stderr)
		}
	})
}
