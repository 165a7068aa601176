package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	applyType       = "application/apply-patch+yaml"
	applyDeployPath = "/apis/apps/v1/namespaces/default/deployments"
)

// send is Do with a User-Agent.
func send(t *testing.T, s *testserver.Server, method, path, ctype, ua, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func deploymentYAML(name string, replicas int, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: ` + itoa(int64(replicas)) + `
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: c
        image: ` + image + `
        ports:
        - containerPort: 80
`
}

func managed(t *testing.T, mf []metav1.ManagedFieldsEntry, manager string) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range mf {
		if e.Manager == manager {
			return e
		}
	}
	t.Fatalf("no managedFields entry of %q in %+v", manager, mf)
	return metav1.ManagedFieldsEntry{}
}

func owns(e metav1.ManagedFieldsEntry, field string) bool {
	return e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), field)
}

func applyDeployment(t *testing.T, s *testserver.Server, name, query, body string, wantCode int) *appsv1.Deployment {
	t.Helper()
	code, out := send(t, s, http.MethodPatch, applyDeployPath+"/"+name+query, applyType, "", body)
	if code != wantCode {
		t.Fatalf("apply %s%s: %d %s", name, query, code, out)
	}
	return decode[*appsv1.Deployment](t, out)
}

func TestApplyCreatesThenReappliesOwnedFields(t *testing.T) {
	s, _ := start(t, nil)
	d := applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	if d.UID == "" || *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("created: %+v", d)
	}
	e := managed(t, d.ManagedFields, "alice")
	if e.Operation != metav1.ManagedFieldsOperationApply || e.APIVersion != "apps/v1" || e.FieldsType != "FieldsV1" || e.Time == nil || len(d.ManagedFields) != 1 {
		t.Fatalf("managedFields: %+v", d.ManagedFields)
	}
	// The same configuration again changes nothing (no new revision).
	again := applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusOK)
	if again.ResourceVersion != d.ResourceVersion {
		t.Errorf("no-op re-apply wrote: rv %s -> %s", d.ResourceVersion, again.ResourceVersion)
	}
	// A changed image changes that field only; ports stay one (merged by key).
	changed := applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:2"), http.StatusOK)
	c := changed.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Image != "nginx:2" || len(c[0].Ports) != 1 || *changed.Spec.Replicas != 2 {
		t.Fatalf("after re-apply: %+v", changed.Spec)
	}
	if changed.Generation != 2 {
		t.Errorf("generation %d, want 2", changed.Generation)
	}
	// Dropping a field from the configuration removes it (alice owned it alone).
	noReplicas := strings.Replace(deploymentYAML("web", 2, "nginx:2"), "  replicas: 2\n", "", 1)
	dropped := applyDeployment(t, s, "web", "?fieldManager=alice", noReplicas, http.StatusOK)
	if owns(managed(t, dropped.ManagedFields, "alice"), "f:replicas") {
		t.Errorf("alice still owns replicas: %s", managed(t, dropped.ManagedFields, "alice").FieldsV1.Raw)
	}
}

func TestApplyConflictAndForce(t *testing.T) {
	s, _ := start(t, nil)
	applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	code, body := send(t, s, http.MethodPatch, applyDeployPath+"/web?fieldManager=bob", applyType, "", deploymentYAML("web", 5, "nginx:1"))
	if code != http.StatusConflict {
		t.Fatalf("bob's apply: %d %s", code, body)
	}
	st := decode[metav1.Status](t, body)
	if st.Reason != metav1.StatusReasonConflict || st.Details == nil || len(st.Details.Causes) != 1 {
		t.Fatalf("status: %+v", st)
	}
	cause := st.Details.Causes[0]
	if cause.Type != metav1.CauseTypeFieldManagerConflict || cause.Field != ".spec.replicas" || cause.Message != `conflict with "alice"` {
		t.Errorf("cause: %+v", cause)
	}
	if st.Message != `Apply failed with 1 conflict: conflict with "alice": .spec.replicas` {
		t.Errorf("message: %q", st.Message)
	}
	// force=true: bob takes replicas; alice keeps the image, shared with bob.
	d := applyDeployment(t, s, "web", "?fieldManager=bob&force=true", deploymentYAML("web", 5, "nginx:1"), http.StatusOK)
	if *d.Spec.Replicas != 5 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	alice, bob := managed(t, d.ManagedFields, "alice"), managed(t, d.ManagedFields, "bob")
	if owns(alice, "f:replicas") || !owns(bob, "f:replicas") || !owns(alice, "f:image") || !owns(bob, "f:image") {
		t.Errorf("alice %s bob %s", alice.FieldsV1.Raw, bob.FieldsV1.Raw)
	}
	// force on a non-apply patch is refused.
	code, body = send(t, s, http.MethodPatch, applyDeployPath+"/web?force=true", "application/merge-patch+json", "", `{"spec":{"replicas":1}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "may not be specified for non-apply patch") {
		t.Errorf("merge patch with force: %d %s", code, body)
	}
}

func TestApplyKeepsFieldsOfUpdateManagers(t *testing.T) {
	s, _ := start(t, nil)
	applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	// A client-side write (merge patch) by another manager adds a label.
	code, body := send(t, s, http.MethodPatch, applyDeployPath+"/web", "application/merge-patch+json", "labeler/v0.1 (linux)",
		`{"metadata":{"labels":{"team":"a"}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}],"env":[{"name":"X","value":"1"}]}]}}}}`)
	if code != http.StatusOK {
		t.Fatalf("merge patch: %d %s", code, body)
	}
	p := decode[*appsv1.Deployment](t, body)
	e := managed(t, p.ManagedFields, "labeler")
	if e.Operation != metav1.ManagedFieldsOperationUpdate || !owns(e, `"f:team"`) || !owns(e, `k:{\"name\":\"X\"}`) {
		t.Fatalf("labeler's entry: %+v %s", e, e.FieldsV1)
	}
	// alice re-applies her configuration (no label, no env): the labeler's
	// fields stay.
	d := applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 3, "nginx:1"), http.StatusOK)
	if d.Labels["team"] != "a" || len(d.Spec.Template.Spec.Containers[0].Env) != 1 || *d.Spec.Replicas != 3 {
		t.Errorf("after apply: labels %v env %v replicas %d", d.Labels, d.Spec.Template.Spec.Containers[0].Env, *d.Spec.Replicas)
	}
}

func TestManagedFieldsOnCreateUpdatePatch(t *testing.T) {
	s, _ := start(t, nil)
	code, body := send(t, s, http.MethodPost, cmPath, "application/json", "kubectl/v1.37.0 (linux/amd64) kubernetes/abc",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	cm := decode[*corev1.ConfigMap](t, body)
	e := managed(t, cm.ManagedFields, "kubectl")
	if e.Operation != metav1.ManagedFieldsOperationUpdate || e.APIVersion != "v1" || string(e.FieldsV1.Raw) != `{"f:data":{".":{},"f:a":{}}}` || len(cm.ManagedFields) != 1 {
		t.Fatalf("create managedFields: %+v", cm.ManagedFields)
	}
	// PUT with ?fieldManager= and no managedFields in the body: the live
	// entries are kept and the editor's is added.
	cm.ManagedFields = nil
	cm.Data["b"] = "2"
	code, body = send(t, s, http.MethodPut, cmPath+"/c?fieldManager=editor", "application/json", "", string(mustJSON(t, cm)))
	if code != http.StatusOK {
		t.Fatalf("update: %d %s", code, body)
	}
	cm = decode[*corev1.ConfigMap](t, body)
	managed(t, cm.ManagedFields, "kubectl")
	if e := managed(t, cm.ManagedFields, "editor"); e.Operation != metav1.ManagedFieldsOperationUpdate || string(e.FieldsV1.Raw) != `{"f:data":{"f:b":{}}}` {
		t.Errorf("editor: %+v %s", e, e.FieldsV1.Raw)
	}
	// Strategic merge patch by user agent.
	code, body = send(t, s, http.MethodPatch, cmPath+"/c", "application/strategic-merge-patch+json", "patcher/1.0", `{"data":{"c":"3"}}`)
	if code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, body)
	}
	cm = decode[*corev1.ConfigMap](t, body)
	if e := managed(t, cm.ManagedFields, "patcher"); string(e.FieldsV1.Raw) != `{"f:data":{"f:c":{}}}` {
		t.Errorf("patcher: %s", e.FieldsV1.Raw)
	}
	// A GET returns them too.
	code, body = send(t, s, http.MethodGet, cmPath+"/c", "", "", "")
	if code != http.StatusOK || len(decode[*corev1.ConfigMap](t, body).ManagedFields) != 3 {
		t.Errorf("get: %d %s", code, body)
	}
	// An empty list resets them.
	code, body = send(t, s, http.MethodPatch, cmPath+"/c", "application/merge-patch+json", "", `{"metadata":{"managedFields":[]}}`)
	if code != http.StatusOK || len(decode[*corev1.ConfigMap](t, body).ManagedFields) != 0 {
		t.Errorf("reset: %d %s", code, body)
	}
	// An invalid fieldManager is refused as Kubernetes does.
	code, body = send(t, s, http.MethodPost, cmPath+"?fieldManager="+strings.Repeat("x", 129), "application/json", "",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "fieldManager") {
		t.Errorf("long fieldManager: %d %s", code, body)
	}
}

func TestApplyStatusSubresource(t *testing.T) {
	s, _ := start(t, nil)
	applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	code, body := send(t, s, http.MethodPatch, applyDeployPath+"/web/status?fieldManager=ctrl", applyType, "",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nstatus: {replicas: 2, readyReplicas: 1}\nspec: {replicas: 9}\n")
	if code != http.StatusOK {
		t.Fatalf("status apply: %d %s", code, body)
	}
	d := decode[*appsv1.Deployment](t, body)
	if d.Status.ReadyReplicas != 1 || *d.Spec.Replicas != 2 {
		t.Errorf("status %+v replicas %d", d.Status, *d.Spec.Replicas)
	}
	e := managed(t, d.ManagedFields, "ctrl")
	if e.Subresource != "status" || e.Operation != metav1.ManagedFieldsOperationApply || owns(e, "f:spec") || !owns(e, "f:readyReplicas") {
		t.Errorf("ctrl: %+v %s", e, e.FieldsV1.Raw)
	}
	// Apply through status does not create.
	code, body = send(t, s, http.MethodPatch, applyDeployPath+"/nope/status?fieldManager=ctrl", applyType, "",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nope}\nstatus: {replicas: 2}\n")
	if code != http.StatusNotFound {
		t.Errorf("status apply of a missing object: %d %s", code, body)
	}
}

func TestApplyDryRunChangesNothing(t *testing.T) {
	s, _ := start(t, nil)
	d := applyDeployment(t, s, "web", "?fieldManager=alice&dryRun=All", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	if len(d.ManagedFields) != 1 {
		t.Errorf("dry-run create answer: %+v", d.ManagedFields)
	}
	if code, body := send(t, s, http.MethodGet, applyDeployPath+"/web", "", "", ""); code != http.StatusNotFound {
		t.Fatalf("dry-run apply created: %d %s", code, body)
	}
	live := applyDeployment(t, s, "web", "?fieldManager=alice", deploymentYAML("web", 2, "nginx:1"), http.StatusCreated)
	dry := applyDeployment(t, s, "web", "?fieldManager=bob&force=true&dryRun=All", deploymentYAML("web", 7, "nginx:1"), http.StatusOK)
	if dry.ResourceVersion != live.ResourceVersion {
		t.Errorf("dry-run answer resourceVersion %q, want the live %q", dry.ResourceVersion, live.ResourceVersion)
	}
	if *dry.Spec.Replicas != 7 {
		t.Errorf("dry-run answer replicas %d", *dry.Spec.Replicas)
	}
	_, body := send(t, s, http.MethodGet, applyDeployPath+"/web", "", "", "")
	got := decode[*appsv1.Deployment](t, body)
	if got.ResourceVersion != live.ResourceVersion || *got.Spec.Replicas != 2 || len(got.ManagedFields) != 1 {
		t.Errorf("dry run changed the object: rv %s->%s replicas %d managed %+v", live.ResourceVersion, got.ResourceVersion, *got.Spec.Replicas, got.ManagedFields)
	}
}

func TestApplyBadRequests(t *testing.T) {
	s, _ := start(t, nil)
	for _, c := range []struct {
		name, path, body string
		code             int
		reason           metav1.StatusReason
		msg              string
	}{
		{"no fieldManager", applyDeployPath + "/web", deploymentYAML("web", 1, "x"), 422, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"wrong kind", applyDeployPath + "/web?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n", 400, metav1.StatusReasonBadRequest,
			"invalid object type: /v1, Kind=ConfigMap"},
		{"wrong apiVersion", applyDeployPath + "/web?fieldManager=a", strings.Replace(deploymentYAML("web", 1, "x"), "apps/v1", "apps/v2", 1), 400, metav1.StatusReasonBadRequest,
			"invalid object type: apps/v2, Kind=Deployment"},
		{"malformed YAML", applyDeployPath + "/web?fieldManager=a", "apiVersion: apps/v1\nkind: [Deployment\n", 400, metav1.StatusReasonBadRequest,
			"error decoding YAML"},
		{"managedFields in the configuration", applyDeployPath + "/web?fieldManager=a", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  managedFields: [{manager: x}]\n", 400, metav1.StatusReasonBadRequest,
			"metadata.managedFields must be nil"},
		{"name differs from the URL", applyDeployPath + "/web?fieldManager=a", deploymentYAML("other", 1, "x"), 400, metav1.StatusReasonBadRequest,
			"does not match the name on the URL"},
		{"invalid object", applyDeployPath + "/web?fieldManager=a", deploymentYAML("web", -1, "x"), 422, metav1.StatusReasonInvalid,
			"spec.replicas"},
	} {
		code, body := send(t, s, http.MethodPatch, c.path, applyType, "", c.body)
		var st metav1.Status
		_ = json.Unmarshal(body, &st)
		if code != c.code || st.Kind != "Status" || st.Reason != c.reason || !strings.Contains(st.Message, c.msg) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	if code, body := send(t, s, http.MethodGet, applyDeployPath+"/web", "", "", ""); code != http.StatusNotFound {
		t.Errorf("a failed apply created the object: %d %s", code, body)
	}
}

var _ = bytes.NewReader
