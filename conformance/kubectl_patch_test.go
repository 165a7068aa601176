package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlPatch: kubectl patch --type merge|json|strategic on a
// Deployment; the strategic result is compared with apimachinery's own
// strategic merge of the same patch on the same object.
func TestKubectlPatch(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	kubectl(t, env, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
      - name: sidecar
        image: busybox:1.36
`, "apply", "-f", "-")
	get := func(t *testing.T) (appsv1.Deployment, []byte) {
		t.Helper()
		out := kubectl(t, env, "", "get", "deployment", "web", "-o", "json")
		var d appsv1.Deployment
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d, []byte(out)
	}
	patch := func(t *testing.T, typ, p string) {
		t.Helper()
		if out := kubectl(t, env, "", "patch", "deployment", "web", "--type", typ, "-p", p); out != "deployment.apps/web patched\n" {
			t.Errorf("patch --type %s: %q", typ, out)
		}
	}

	t.Run("merge", func(t *testing.T) {
		patch(t, "merge", `{"metadata":{"labels":{"tier":null,"patched":"merge"}},"spec":{"replicas":3}}`)
		d, _ := get(t)
		if *d.Spec.Replicas != 3 || !reflect.DeepEqual(d.Labels, map[string]string{"app": "web", "patched": "merge"}) {
			t.Errorf("after merge patch: replicas %d labels %v", *d.Spec.Replicas, d.Labels)
		}
		if len(d.Spec.Template.Spec.Containers) != 2 {
			t.Errorf("merge patch touched the containers: %+v", d.Spec.Template.Spec.Containers)
		}
		// A merge patch replaces a list whole: main's env goes.
		patch(t, "merge", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.25"},{"name":"sidecar","image":"busybox:1.36"}]}}}}`)
		d, _ = get(t)
		if c := d.Spec.Template.Spec.Containers; len(c) != 2 || c[0].Env != nil || c[1].Name != "sidecar" {
			t.Errorf("containers after a merge patch of the list: %+v", c)
		}
		if out := kubectl(t, env, "", "patch", "deployment", "web", "--type", "merge", "-p", `{"spec":{"replicas":3}}`); out != "deployment.apps/web patched (no change)\n" {
			t.Errorf("no-op merge patch: %q", out)
		}
	})

	t.Run("json", func(t *testing.T) {
		patch(t, "json", `[{"op":"test","path":"/spec/replicas","value":3},{"op":"replace","path":"/spec/replicas","value":1},`+
			`{"op":"add","path":"/metadata/labels/patched","value":"json"},`+
			`{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},`+
			`{"op":"remove","path":"/spec/template/spec/containers/0/env/1"},`+
			`{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"third","image":"redis:7"}}]`)
		d, _ := get(t)
		c := d.Spec.Template.Spec.Containers
		if *d.Spec.Replicas != 1 || d.Labels["patched"] != "json" || len(c) != 3 || c[2].Name != "third" || c[2].Image != "redis:7" ||
			!reflect.DeepEqual(c[0].Env, []corev1.EnvVar{{Name: "A", Value: "1"}}) {
			t.Errorf("after json patch: replicas %d labels %v containers %+v", *d.Spec.Replicas, d.Labels, c)
		}
		// A failing test operation fails the whole patch: nothing changes.
		rv := d.ResourceVersion
		r := krFails(t, env, "", "patch", "deployment", "web", "--type", "json", "-p",
			`[{"op":"replace","path":"/spec/replicas","value":7},{"op":"test","path":"/spec/replicas","value":99}]`)
		if r.Stderr != "The request is invalid: the server rejected our request due to an error in our request\n" {
			t.Errorf("failing test op: stderr %q, want what kubectl prints for kube-apiserver's 422", r.Stderr)
		}
		if d, _ := get(t); d.ResourceVersion != rv || *d.Spec.Replicas != 1 {
			t.Errorf("the failed patch changed the object (replicas %d)", *d.Spec.Replicas)
		}
	})

	t.Run("strategic", func(t *testing.T) {
		// Containers merge by name: sidecar's image changes, main keeps
		// its env (env merges by name too: B added, A changed), a new
		// container is added, third is deleted by directive.
		p := `{"metadata":{"labels":{"patched":"strategic"}},"spec":{"template":{"spec":{"containers":[` +
			`{"name":"sidecar","image":"busybox:1.37"},` +
			`{"name":"main","env":[{"name":"A","value":"one"},{"name":"B","value":"2"}]},` +
			`{"name":"fourth","image":"memcached:1"},` +
			`{"name":"third","$patch":"delete"}]}}}}`
		before, beforeJSON := get(t)
		want, err := strategicpatch.StrategicMergePatch(beforeJSON, []byte(p), appsv1.Deployment{})
		if err != nil {
			t.Fatal(err)
		}
		var wantD appsv1.Deployment
		if err := json.Unmarshal(want, &wantD); err != nil {
			t.Fatal(err)
		}
		patch(t, "strategic", p)
		d, _ := get(t)
		// Compare order, names, images and env (the server also defaults
		// new containers' fields).
		summary := func(cs []corev1.Container) []string {
			var s []string
			for _, c := range cs {
				s = append(s, fmt.Sprintf("%s %s %v", c.Name, c.Image, c.Env))
			}
			return s
		}
		if got, want := summary(d.Spec.Template.Spec.Containers), summary(wantD.Spec.Template.Spec.Containers); !reflect.DeepEqual(got, want) {
			t.Errorf("containers after the strategic patch:\n%q\nwant (apimachinery's merge)\n%q", got, want)
		}
		byName := map[string]corev1.Container{}
		for _, c := range d.Spec.Template.Spec.Containers {
			byName[c.Name] = c
		}
		if len(byName) != 3 || byName["sidecar"].Image != "busybox:1.37" || byName["main"].Image != "nginx:1.25" || byName["fourth"].Image != "memcached:1" ||
			!reflect.DeepEqual(byName["main"].Env, []corev1.EnvVar{{Name: "A", Value: "one"}, {Name: "B", Value: "2"}}) {
			t.Errorf("containers by name: %+v", byName)
		}
		if !reflect.DeepEqual(d.Labels, map[string]string{"app": "web", "patched": "strategic"}) || *d.Spec.Replicas != *before.Spec.Replicas {
			t.Errorf("labels %v replicas %d", d.Labels, *d.Spec.Replicas)
		}
		// The default --type is strategic; patching the scale subresource.
		if out := kubectl(t, env, "", "patch", "deployment", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"fourth","$patch":"delete"}]}}}}`); out != "deployment.apps/web patched\n" {
			t.Errorf("default-type patch: %q", out)
		}
		if out := kubectl(t, env, "", "patch", "deployment", "web", "--subresource", "scale", "--type", "merge", "-p", `{"spec":{"replicas":4}}`); out != "scale.autoscaling/web patched\n" {
			t.Errorf("patch --subresource scale: %q", out)
		}
		d, _ = get(t)
		if len(d.Spec.Template.Spec.Containers) != 2 || *d.Spec.Replicas != 4 {
			t.Errorf("after delete directive and scale: %d containers, replicas %d", len(d.Spec.Template.Spec.Containers), *d.Spec.Replicas)
		}
	})
}
