package fieldmanager_test

import (
	"net/http"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/fieldmanager"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
	"github.com/setpoint-dev/setpoint/internal/scheme"
)

var (
	setupOnce sync.Once
	managers  map[string]*fieldmanager.Resource
	setupErr  error
)

// resource returns the field managers of a built-in resource, built from
// the schemas the server publishes.
func resource(t testing.TB, name string) *fieldmanager.Resource {
	t.Helper()
	setupOnce.Do(func() {
		resources := builtin.Resources()
		var svc *openapi.Service
		if svc, setupErr = openapi.New(resources, openapi.Options{}); setupErr != nil {
			return
		}
		var tc fieldmanager.TypeConverter
		if tc, setupErr = fieldmanager.NewTypeConverter(svc.Schemas()); setupErr != nil {
			return
		}
		codecs := scheme.New()
		managers = map[string]*fieldmanager.Resource{}
		for _, res := range resources {
			var r *fieldmanager.Resource
			if r, setupErr = fieldmanager.New(tc, codecs.Scheme, res); setupErr != nil {
				return
			}
			managers[res.Resource] = r
		}
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	r := managers[name]
	if r == nil {
		t.Fatalf("no resource %q", name)
	}
	return r
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1
        ports:
        - containerPort: 80
        env:
        - {name: A, value: "1"}
`

func entry(t *testing.T, obj runtime.Object, manager string) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range obj.(metav1.Object).GetManagedFields() {
		if e.Manager == manager {
			return e
		}
	}
	t.Fatalf("no managedFields entry for %q in %+v", manager, obj.(metav1.Object).GetManagedFields())
	return metav1.ManagedFieldsEntry{}
}

func TestApplyCreatesAndRecordsApplyEntry(t *testing.T) {
	r := resource(t, "deployments")
	out, warnings, err := r.Apply(nil, []byte(deployment), "alice", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	d := out.(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("applied object: %+v", d.Spec)
	}
	if d.Spec.Template.Spec.Containers[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("port protocol not defaulted: %+v", d.Spec.Template.Spec.Containers[0].Ports)
	}
	e := entry(t, d, "alice")
	if e.Operation != metav1.ManagedFieldsOperationApply || e.APIVersion != "apps/v1" || e.FieldsType != "FieldsV1" || e.Time == nil {
		t.Errorf("entry: %+v", e)
	}
	for _, want := range []string{`"f:replicas":{}`, `"k:{\"name\":\"nginx\"}"`, `"k:{\"containerPort\":80,\"protocol\":\"TCP\"}"`, `"k:{\"name\":\"A\"}"`} {
		if !contains(string(e.FieldsV1.Raw), want) {
			t.Errorf("fieldsV1 %s lacks %s", e.FieldsV1.Raw, want)
		}
	}
}

func TestReapplyMatchesDefaultedListKeys(t *testing.T) {
	r := resource(t, "deployments")
	live, _, err := r.Apply(nil, []byte(deployment), "alice", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := r.Apply(live, []byte(deployment), "alice", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	if ports := again.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Ports; len(ports) != 1 {
		t.Errorf("re-apply duplicated the defaulted port: %+v", ports)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestUpdateThenApplyConflictsAndForce(t *testing.T) {
	r := resource(t, "deployments")
	live, _, err := r.Apply(nil, []byte(deployment), "alice", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	// bob scales with an update: he takes spec.replicas.
	scaled := live.DeepCopyObject().(*appsv1.Deployment)
	three := int32(3)
	scaled.Spec.Replicas = &three
	after := r.Update(live, scaled, "bob", "").(*appsv1.Deployment)
	if e := entry(t, after, "bob"); e.Operation != metav1.ManagedFieldsOperationUpdate || string(e.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("bob's entry: %+v %s", e, e.FieldsV1.Raw)
	}
	if e := entry(t, after, "alice"); contains(string(e.FieldsV1.Raw), "f:replicas") {
		t.Errorf("alice still owns replicas: %s", e.FieldsV1.Raw)
	}
	// alice re-applies replicas: 2 → conflict with bob.
	_, _, err = r.Apply(after, []byte(deployment), "alice", "", false, true)
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) {
		t.Fatalf("want 409, got %v", err)
	}
	status = err.(apierrors.APIStatus)
	st := status.Status()
	if st.Code != http.StatusConflict || st.Details == nil || len(st.Details.Causes) != 1 {
		t.Fatalf("status: %+v", st)
	}
	c := st.Details.Causes[0]
	if c.Type != metav1.CauseTypeFieldManagerConflict || c.Field != ".spec.replicas" || c.Message != `conflict with "bob" using apps/v1` {
		t.Errorf("cause: %+v", c)
	}
	if st.Message != `Apply failed with 1 conflict: conflict with "bob" using apps/v1: .spec.replicas` {
		t.Errorf("message: %q", st.Message)
	}
	// force: alice takes replicas back.
	forced, _, err := r.Apply(after, []byte(deployment), "alice", "", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if *forced.(*appsv1.Deployment).Spec.Replicas != 2 {
		t.Errorf("replicas after force: %d", *forced.(*appsv1.Deployment).Spec.Replicas)
	}
	for _, e := range forced.(metav1.Object).GetManagedFields() {
		if e.Manager == "bob" {
			t.Errorf("bob keeps an entry after losing all his fields: %s", e.FieldsV1.Raw)
		}
	}
}

func TestApplyWrongKindAndBadYAML(t *testing.T) {
	r := resource(t, "deployments")
	_, _, err := r.Apply(nil, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"), "a", "", false, true)
	if !apierrors.IsBadRequest(err) || !contains(err.Error(), "invalid object type") {
		t.Errorf("wrong kind: %v", err)
	}
	_, _, err = r.Apply(nil, []byte("{not yaml: [\n"), "a", "", false, true)
	if !apierrors.IsBadRequest(err) || !contains(err.Error(), "error decoding YAML") {
		t.Errorf("bad yaml: %v", err)
	}
	_, _, err = r.Apply(nil, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1}\nspec: {replicas: 2}\n"), "a", "", false, true)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("duplicate field with strict: %v", err)
	}
}

func TestStatusEndpointTracksOnlyStatus(t *testing.T) {
	r := resource(t, "deployments")
	live, _, err := r.Apply(nil, []byte(deployment), "alice", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := r.Apply(live, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nstatus: {replicas: 7}\n"), "ctrl", "status", false, true)
	if err != nil {
		t.Fatal(err)
	}
	e := entry(t, out, "ctrl")
	if e.Subresource != "status" || string(e.FieldsV1.Raw) != `{"f:status":{"f:replicas":{}}}` {
		t.Errorf("status entry: %+v %s", e, e.FieldsV1.Raw)
	}
	// Applying status through the main resource is not tracked.
	out, _, err = r.Apply(live, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nstatus: {replicas: 7}\n"), "ctrl2", "", false, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range out.(metav1.Object).GetManagedFields() {
		if e.Manager == "ctrl2" && contains(string(e.FieldsV1.Raw), "f:status") {
			t.Errorf("main endpoint tracked status: %s", e.FieldsV1.Raw)
		}
	}
}

func TestUpdateOnCreateAndReset(t *testing.T) {
	r := resource(t, "configmaps")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	out := r.Update(nil, cm, "kubectl-create", "")
	e := entry(t, out, "kubectl-create")
	if e.Operation != metav1.ManagedFieldsOperationUpdate || string(e.FieldsV1.Raw) != `{"f:data":{".":{},"f:k":{}}}` {
		t.Errorf("create entry: %+v %s", e, e.FieldsV1.Raw)
	}
	// An empty list in the request resets the entries.
	next := out.DeepCopyObject().(*corev1.ConfigMap)
	next.ManagedFields = []metav1.ManagedFieldsEntry{}
	if got := r.Update(out, next, "x", "").(metav1.Object).GetManagedFields(); len(got) != 0 {
		t.Errorf("after reset: %+v", got)
	}
	// Absent entries keep the live ones.
	next = out.DeepCopyObject().(*corev1.ConfigMap)
	next.ManagedFields = nil
	next.Data["k2"] = "v2"
	got := r.Update(out, next, "editor", "")
	entry(t, got, "kubectl-create")
	if e := entry(t, got, "editor"); string(e.FieldsV1.Raw) != `{"f:data":{"f:k2":{}}}` {
		t.Errorf("editor entry: %s", e.FieldsV1.Raw)
	}
}

func TestManagerName(t *testing.T) {
	for _, c := range []struct{ fm, ua, want string }{
		{"mine", "kubectl/v1.37.0 (linux/amd64)", "mine"},
		{"", "kubectl/v1.37.0 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "kube-controller-manager/v1.37.0", "kube-controller-manager"},
		{"", "", ""},
		{"", "a\x00b/1", "ab"},
	} {
		if got := fieldmanager.ManagerName(c.fm, c.ua); got != c.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", c.fm, c.ua, got, c.want)
		}
	}
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'a'
	}
	if got := fieldmanager.ManagerName("", string(long)); len(got) != 128 {
		t.Errorf("long user agent: %d bytes", len(got))
	}
}

var _ = registry.Resource{}

// An object that does not fit the schema keeps the live object's
// managedFields (validation refuses it later), without the managed-fields
// machinery failing the write.
func TestUpdateOfMisfitObjectKeepsLiveManagedFields(t *testing.T) {
	r := resource(t, "configmaps")
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "earlier", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}}}}
	misfit := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": "not a map"}}
	out := r.Update(live, misfit, "now", "")
	m, err := meta.Accessor(out)
	if err != nil {
		t.Fatal(err)
	}
	if mf := m.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "earlier" {
		t.Errorf("managedFields = %+v, want the live object's", mf)
	}
}
