package conformance

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/testenv"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestKubectlClientSideApply: kubectl apply (client-side, the default)
// creates, writes the last-applied-configuration annotation, leaves an
// unchanged object alone, and on re-apply removes what the manifest no
// longer has while keeping what others set (three-way merge).
func TestKubectlClientSideApply(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	v1 := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, stage: beta}
  annotations: {owner: team-a}
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
        - {name: MODE, value: fast}
        - {name: DEBUG, value: "1"}
      - name: sidecar
        image: busybox:1.36
`
	// v2: replicas 3, the stage label, the owner annotation, the DEBUG
	// variable and the sidecar removed; a new image.
	v2 := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.27
        env:
        - {name: MODE, value: fast}
`
	get := func(t *testing.T) appsv1.Deployment {
		t.Helper()
		var d appsv1.Deployment
		krJSON(t, env, &d, "get", "deployment", "web", "-o", "json")
		return d
	}
	// annotationIs checks the last-applied annotation is the manifest as
	// JSON (plus the namespace and the empty annotations map kubectl adds).
	annotationIs := func(t *testing.T, d appsv1.Deployment, manifest string) {
		t.Helper()
		var got, want map[string]any
		if err := json.Unmarshal([]byte(d.Annotations[lastApplied]), &got); err != nil {
			t.Fatalf("%s: %v (%q)", lastApplied, err, d.Annotations[lastApplied])
		}
		if err := yaml.Unmarshal([]byte(manifest), &want); err != nil {
			t.Fatal(err)
		}
		md := want["metadata"].(map[string]any)
		md["namespace"] = "default"
		if _, ok := md["annotations"]; !ok {
			md["annotations"] = map[string]any{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s =\n%v\nwant\n%v", lastApplied, got, want)
		}
	}

	if out := kubectl(t, env, v1, "apply", "-f", "-"); out != "deployment.apps/web created\n" {
		t.Fatalf("first apply: %q", out)
	}
	d := get(t)
	annotationIs(t, d, v1)
	c := d.Spec.Template.Spec.Containers
	if *d.Spec.Replicas != 2 || d.Labels["stage"] != "beta" || d.Annotations["owner"] != "team-a" || len(c) != 2 || len(c[0].Env) != 2 {
		t.Fatalf("created: %+v %+v", d.ObjectMeta, d.Spec)
	}
	if d.Generation != 1 {
		t.Errorf("generation %d after create", d.Generation)
	}

	if out := kubectl(t, env, v1, "apply", "-f", "-"); out != "deployment.apps/web unchanged\n" {
		t.Errorf("re-apply of the same manifest: %q", out)
	}
	if again := get(t); again.ResourceVersion != d.ResourceVersion {
		t.Errorf("unchanged apply wrote: resourceVersion %s -> %s", d.ResourceVersion, again.ResourceVersion)
	}

	// Somebody else adds a label and an annotation imperatively: apply
	// does not own them, so they stay.
	kubectl(t, env, "", "label", "deployment", "web", "extra=kept")
	kubectl(t, env, "", "annotate", "deployment", "web", "note=kept")

	if out := kubectl(t, env, v2, "apply", "-f", "-"); out != "deployment.apps/web configured\n" {
		t.Fatalf("apply of v2: %q", out)
	}
	d = get(t)
	annotationIs(t, d, v2)
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", *d.Spec.Replicas)
	}
	if want := map[string]string{"app": "web", "extra": "kept"}; !reflect.DeepEqual(d.Labels, want) {
		t.Errorf("labels %v, want %v (stage removed, extra kept)", d.Labels, want)
	}
	if _, ok := d.Annotations["owner"]; ok || d.Annotations["note"] != "kept" {
		t.Errorf("annotations %v: owner removed, note kept", d.Annotations)
	}
	c = d.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Name != "main" || c[0].Image != "nginx:1.27" || !reflect.DeepEqual(c[0].Env, []corev1.EnvVar{{Name: "MODE", Value: "fast"}}) {
		t.Errorf("containers %+v: sidecar and DEBUG removed, image nginx:1.27", c)
	}
	if d.Generation != 2 {
		t.Errorf("generation %d after one spec change, want 2", d.Generation)
	}

	// A manifest with an unknown field is refused whole.
	bad := v2 + "  bogus: 1\n"
	r := krFails(t, env, bad, "apply", "-f", "-")
	if !strings.Contains(r.Stderr, `unknown field "spec.bogus"`) {
		t.Errorf("apply with an unknown field: %s", r.Stderr)
	}
	if after := get(t); after.ResourceVersion != d.ResourceVersion {
		t.Error("the refused apply changed the object")
	}
}
