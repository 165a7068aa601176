package apiserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const (
	crdPath     = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"
)

// widgetCRD is a namespaced CRD with two versions (v1 stored), status and
// scale subresources, a schema with required, enum, range, pattern,
// default and preserve-unknown fields, and printer columns.
const widgetCRD = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "widgets.example.com"},
 "spec": {
  "group": "example.com", "scope": "Namespaced",
  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
  "versions": [
   {"name": "v1", "served": true, "storage": true,
    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
    "additionalPrinterColumns": [
     {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
     {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
     "spec": {"type": "object", "required": ["image"], "properties": {
       "image": {"type": "string", "description": "the container image"},
       "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
       "color": {"type": "string", "enum": ["red", "blue"]},
       "name": {"type": "string", "pattern": "^[a-z]+$"},
       "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
     "status": {"type": "object", "properties": {
       "replicas": {"type": "integer"}, "selector": {"type": "string"}, "phase": {"type": "string"}}}}}}},
   {"name": "v1beta1", "served": true, "storage": false,
    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
 }
}`

func do(t *testing.T, s *testserver.Server, method, path, ctype, body string) (int, []byte, http.Header) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	if r == nil {
		return s.Do(t, method, path, ctype, nil)
	}
	return s.Do(t, method, path, ctype, r)
}

// createWidgetCRD creates the CRD and waits until widgets are served.
func createWidgetCRD(t *testing.T, s *testserver.Server) {
	t.Helper()
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", widgetCRD); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	waitFor(t, "widgets served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, widgetsPath, "", "")
		return code == http.StatusOK
	})
}

// waitFor polls cond until it holds, for at most 30 s: what the server
// does after answering (serving a CRD, following a FlowSchema) comes a
// moment later, and much later on a loaded machine.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 20*time.Millisecond, what, testwait.Bool(cond))
}

type crdObj struct {
	Metadata struct {
		Finalizers    []string `json:"finalizers"`
		ManagedFields []struct {
			Manager, Operation, Subresource string
		} `json:"managedFields"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type, Status, Reason string
		} `json:"conditions"`
		AcceptedNames struct {
			Plural, Kind string
		} `json:"acceptedNames"`
		StoredVersions []string `json:"storedVersions"`
	} `json:"status"`
}

func TestCRDServesItsResource(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)

	// The CRD reports Established and NamesAccepted.
	var crd crdObj
	waitFor(t, "CRD established", func() bool {
		_, body, _ := do(t, s, http.MethodGet, crdPath+"/widgets.example.com", "", "")
		crd = decode[crdObj](t, body)
		ok := 0
		for _, c := range crd.Status.Conditions {
			if (c.Type == "Established" || c.Type == "NamesAccepted") && c.Status == "True" {
				ok++
			}
		}
		return ok == 2
	})
	if crd.Status.AcceptedNames.Plural != "widgets" || crd.Status.AcceptedNames.Kind != "Widget" ||
		len(crd.Status.StoredVersions) != 1 || crd.Status.StoredVersions[0] != "v1" {
		t.Errorf("CRD status = %+v", crd.Status)
	}
	// The controller's status writes are recorded as kube-apiserver's.
	if mf := crd.Metadata.ManagedFields; len(mf) != 2 || mf[1].Manager != "kube-apiserver" || mf[1].Operation != "Update" || mf[1].Subresource != "status" {
		t.Errorf("CRD managedFields = %+v, want the creator's and kube-apiserver's status entry", mf)
	}

	// Discovery lists both versions, v1 preferred, with the subresources.
	_, body, _ := do(t, s, http.MethodGet, "/apis/example.com", "", "")
	group := decode[struct {
		Versions         []struct{ Version string } `json:"versions"`
		PreferredVersion struct{ Version string }   `json:"preferredVersion"`
	}](t, body)
	if len(group.Versions) != 2 || group.PreferredVersion.Version != "v1" {
		t.Errorf("group discovery = %s", body)
	}
	_, body, _ = do(t, s, http.MethodGet, "/apis/example.com/v1", "", "")
	for _, want := range []string{`"name":"widgets"`, `"name":"widgets/status"`, `"name":"widgets/scale"`, `"shortNames":["wd"]`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("v1 discovery lacks %s: %s", want, body)
		}
	}
	// OpenAPI v3 of the group-version has the schema.
	code, body, _ := do(t, s, http.MethodGet, "/openapi/v3/apis/example.com/v1", "", "")
	if code != http.StatusOK || !bytes.Contains(body, []byte("com.example.v1.Widget")) || !bytes.Contains(body, []byte("the container image")) {
		t.Errorf("openapi v3: %d %.300s", code, body)
	}
}

func TestCustomResourceWrites(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)

	// A valid object: defaults applied, unknown fields pruned with a warning.
	code, body, hdr := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"image":"nginx","bogus":1,"extra":{"free":"form"}},"status":{"phase":"ignored"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	var w map[string]any
	w = decode[map[string]any](t, body)
	spec := w["spec"].(map[string]any)
	if spec["replicas"] != float64(1) || spec["bogus"] != nil || spec["extra"].(map[string]any)["free"] != "form" || w["status"] != nil {
		t.Errorf("created object = %s", body)
	}
	if !strings.Contains(strings.Join(hdr.Values("Warning"), "\n"), `unknown field \"spec.bogus\"`) {
		t.Errorf("warnings = %q", hdr.Values("Warning"))
	}
	if md := w["metadata"].(map[string]any); md["generation"] != float64(1) || md["uid"] == nil {
		t.Errorf("metadata = %v", md)
	}

	// Strict field validation refuses unknown fields, naming them.
	code, body, _ = do(t, s, http.MethodPost, widgetsPath+"?fieldValidation=Strict", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"image":"nginx","bogus":1}}`)
	if st := decode[status](t, body); code != http.StatusBadRequest || !strings.Contains(st.Message, `unknown field "spec.bogus"`) {
		t.Errorf("strict unknown field: %d %s", code, body)
	}

	// Schema violations: 422 with the field path.
	for _, c := range []struct{ name, spec, field, reason string }{
		{"wrongtype", `{"image":"nginx","replicas":"three"}`, "spec.replicas", "FieldValueTypeInvalid"},
		{"required", `{"replicas":2}`, "spec.image", "FieldValueRequired"},
		{"range", `{"image":"nginx","replicas":11}`, "spec.replicas", "FieldValueInvalid"},
		{"enum", `{"image":"nginx","color":"green"}`, "spec.color", "FieldValueNotSupported"},
		{"pattern", `{"image":"nginx","name":"NO"}`, "spec.name", "FieldValueInvalid"},
	} {
		code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad-`+c.name+`"},"spec":`+c.spec+`}`)
		st := decode[status](t, body)
		found := false
		for _, cause := range st.Details.Causes {
			found = found || cause.Field == c.field
		}
		if code != http.StatusUnprocessableEntity || st.Reason != "Invalid" || !found {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
		if !bytes.Contains(body, []byte(c.reason)) {
			t.Errorf("%s: cause type %s missing: %s", c.name, c.reason, body)
		}
	}

	// Another version of the same object.
	code, body, _ = do(t, s, http.MethodGet, "/apis/example.com/v1beta1/namespaces/default/widgets/w1", "", "")
	if code != http.StatusOK || decode[map[string]any](t, body)["apiVersion"] != "example.com/v1beta1" {
		t.Errorf("get v1beta1: %d %s", code, body)
	}

	// Status subresource: the main resource ignores status; /status
	// changes only status; generation follows spec only.
	code, body, _ = do(t, s, http.MethodPatch, widgetsPath+"/w1/status", "application/merge-patch+json",
		`{"spec":{"image":"changed"},"status":{"replicas":3,"selector":"app=w1","phase":"Running"}}`)
	w = decode[map[string]any](t, body)
	if code != http.StatusOK || w["status"].(map[string]any)["phase"] != "Running" || w["spec"].(map[string]any)["image"] != "nginx" ||
		w["metadata"].(map[string]any)["generation"] != float64(1) {
		t.Errorf("patch status: %d %s", code, body)
	}
	code, body, _ = do(t, s, http.MethodPatch, widgetsPath+"/w1", "application/merge-patch+json",
		`{"spec":{"replicas":4},"status":{"phase":"Lost"}}`)
	w = decode[map[string]any](t, body)
	if code != http.StatusOK || w["status"].(map[string]any)["phase"] != "Running" || w["metadata"].(map[string]any)["generation"] != float64(2) {
		t.Errorf("patch main: %d %s", code, body)
	}

	// Scale subresource.
	code, body, _ = do(t, s, http.MethodGet, widgetsPath+"/w1/scale", "", "")
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"replicas":4`)) || !bytes.Contains(body, []byte(`"selector":"app=w1"`)) {
		t.Errorf("get scale: %d %s", code, body)
	}
	code, body, _ = do(t, s, http.MethodPatch, widgetsPath+"/w1/scale?fieldManager=scaler", "application/merge-patch+json", `{"spec":{"replicas":6}}`)
	if code != http.StatusOK {
		t.Errorf("patch scale: %d %s", code, body)
	}
	_, body, _ = do(t, s, http.MethodGet, widgetsPath+"/w1", "", "")
	if decode[map[string]any](t, body)["spec"].(map[string]any)["replicas"] != float64(6) {
		t.Errorf("after scale: %s", body)
	}
	checkScaleOwnership(t, body, "scaler")

	// No strategic merge patch and no protobuf for custom resources.
	if code, body, _ := do(t, s, http.MethodPatch, widgetsPath+"/w1", "application/strategic-merge-patch+json", `{"spec":{"replicas":2}}`); code != http.StatusUnsupportedMediaType {
		t.Errorf("strategic merge patch: %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+widgetsPath+"/w1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	if code, _, _ := doRequest(t, s, req); code != http.StatusNotAcceptable {
		t.Errorf("protobuf-only accept: %d", code)
	}
	// Nor protobuf watch streams: a client that also accepts JSON watches
	// in JSON, one that accepts only protobuf gets 406.
	req, _ = http.NewRequest(http.MethodGet, s.URL+widgetsPath+"?watch=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf;stream=watch")
	if code, _, _ := doRequest(t, s, req); code != http.StatusNotAcceptable {
		t.Errorf("protobuf-only watch: %d", code)
	}
	req, _ = http.NewRequest(http.MethodGet, s.URL+widgetsPath+"?watch=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
	if code, body, h := doRequest(t, s, req); code != http.StatusOK || h.Get("Content-Type") != "application/json" || !bytes.HasPrefix(body, []byte(`{"type":"ADDED"`)) {
		t.Errorf("protobuf-or-JSON watch: %d %s %.80s", code, h.Get("Content-Type"), body)
	}

	// Table with the printer columns.
	req, _ = http.NewRequest(http.MethodGet, s.URL+widgetsPath, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	code, body, _ = doRequest(t, s, req)
	var tbl struct {
		ColumnDefinitions []struct{ Name string } `json:"columnDefinitions"`
		Rows              []struct{ Cells []any } `json:"rows"`
	}
	if err := json.Unmarshal(body, &tbl); err != nil || code != http.StatusOK {
		t.Fatalf("table: %d %s", code, body)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Name,Image,Replicas,Age" || len(tbl.Rows) != 1 ||
		tbl.Rows[0].Cells[0] != "w1" || tbl.Rows[0].Cells[1] != "nginx" || tbl.Rows[0].Cells[2] != float64(6) {
		t.Errorf("table = %s", body)
	}
}

// doRequest sends req with the server's credentials.
func doRequest(t *testing.T, s *testserver.Server, req *http.Request) (int, []byte, http.Header) {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, buf.Bytes(), resp.Header
}

// Deleting a CRD deletes its objects (waiting for their finalizers), then
// the CRD itself, and the resource stops being served.
func TestDeleteCRDDeletesObjectsAndStopsServing(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)
	for _, name := range []string{"a", "b"} {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"image":"nginx"}}`
		if name == "b" {
			body = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b","finalizers":["example.com/hold"]},"spec":{"image":"nginx"}}`
		}
		if code, resp, _ := do(t, s, http.MethodPost, widgetsPath, "application/json", body); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, resp)
		}
	}
	if code, body, _ := do(t, s, http.MethodDelete, crdPath+"/widgets.example.com", "", ""); code != http.StatusOK {
		t.Fatalf("delete CRD: %d %s", code, body)
	}
	// The CRD waits, Terminating, with its cleanup finalizer, while b is held.
	waitFor(t, "a deleted, b terminating", func() bool {
		codeA, _, _ := do(t, s, http.MethodGet, widgetsPath+"/a", "", "")
		_, body, _ := do(t, s, http.MethodGet, widgetsPath+"/b", "", "")
		return codeA == http.StatusNotFound && bytes.Contains(body, []byte("deletionTimestamp"))
	})
	_, body, _ := do(t, s, http.MethodGet, crdPath+"/widgets.example.com", "", "")
	crd := decode[crdObj](t, body)
	terminating := false
	for _, c := range crd.Status.Conditions {
		terminating = terminating || (c.Type == "Terminating" && c.Status == "True")
	}
	if !terminating || len(crd.Metadata.Finalizers) != 1 || crd.Metadata.Finalizers[0] != "customresourcecleanup.apiextensions.k8s.io" {
		t.Errorf("terminating CRD = %s", body)
	}
	// Creates are refused meanwhile.
	code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"c"},"spec":{"image":"nginx"}}`)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("create while terminating: %d %s", code, body)
	}
	// Releasing b lets everything go.
	if code, body, _ := do(t, s, http.MethodPatch, widgetsPath+"/b", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`); code != http.StatusOK {
		t.Fatalf("release b: %d %s", code, body)
	}
	waitFor(t, "CRD gone and resource unserved", func() bool {
		c1, _, _ := do(t, s, http.MethodGet, crdPath+"/widgets.example.com", "", "")
		c2, _, _ := do(t, s, http.MethodGet, widgetsPath, "", "")
		c3, _, _ := do(t, s, http.MethodGet, "/apis/example.com/v1", "", "")
		return c1 == http.StatusNotFound && c2 == http.StatusNotFound && c3 == http.StatusNotFound
	})
	// Created again, the resource is empty.
	createWidgetCRD(t, s)
	_, body, _ = do(t, s, http.MethodGet, widgetsPath, "", "")
	if l := decode[list](t, body); len(l.Items) != 0 {
		t.Errorf("objects survived their CRD: %s", body)
	}
}

// A cluster-scoped CRD serves objects without a namespace; a second CRD
// claiming the same plural in the group is not accepted.
func TestClusterScopedCRDAndNameConflict(t *testing.T) {
	s, _ := start(t, nil)
	crd := strings.NewReplacer(`"Namespaced"`, `"Cluster"`, "widgets.example.com", "gadgets.example.com",
		`"plural": "widgets"`, `"plural": "gadgets"`, `"singular": "widget"`, `"singular": "gadget"`,
		`"kind": "Widget"`, `"kind": "Gadget"`, `["wd"]`, `["gd"]`).Replace(widgetCRD)
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", crd); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	waitFor(t, "gadgets served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, "/apis/example.com/v1/gadgets", "", "")
		return code == http.StatusOK
	})
	code, body, _ := do(t, s, http.MethodPost, "/apis/example.com/v1/gadgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"image":"x"}}`)
	if code != http.StatusCreated || bytes.Contains(body, []byte(`"namespace"`)) {
		t.Errorf("create cluster-scoped: %d %s", code, body)
	}
	if code, _, _ := do(t, s, http.MethodGet, "/apis/example.com/v1/namespaces/default/gadgets", "", ""); code != http.StatusNotFound {
		t.Errorf("cluster-scoped resource under a namespace: %d", code)
	}
	// Same group and plural, other CRD name: rejected by validation
	// (the name must be <plural>.<group>), and a kind clash is reported.
	clash := strings.NewReplacer("gadgets.example.com", "gizmos.example.com", `"plural": "gadgets"`, `"plural": "gizmos"`,
		`"singular": "gadget"`, `"singular": "gizmo"`, `["gd"]`, `["gz"]`).Replace(crd)
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", clash); code != http.StatusCreated {
		t.Fatalf("create clashing CRD: %d %s", code, body)
	}
	waitFor(t, "kind conflict reported", func() bool {
		_, body, _ := do(t, s, http.MethodGet, crdPath+"/gizmos.example.com", "", "")
		c := decode[crdObj](t, body)
		for _, cond := range c.Status.Conditions {
			if cond.Type == "NamesAccepted" && cond.Status == "False" {
				return true
			}
		}
		return false
	})
	if code, _, _ := do(t, s, http.MethodGet, "/apis/example.com/v1/gizmos", "", ""); code != http.StatusNotFound {
		t.Errorf("conflicting CRD is served: %d", code)
	}
}

// Invalid CRDs are refused with 422 and field paths.
func TestInvalidCRD(t *testing.T) {
	s, _ := start(t, nil)
	for _, c := range []struct{ name, from, to, field string }{
		{"name", `"name": "widgets.example.com"`, `"name": "things.example.com"`, "metadata.name"},
		{"two-storage", `"storage": false`, `"storage": true`, "spec.versions"},
		{"scope", `"Namespaced"`, `"Sometimes"`, "spec.scope"},
		{"no-type", `"image": {"type": "string", "description": "the container image"}`, `"image": {"description": "the container image"}`,
			"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].type"},
	} {
		body := strings.Replace(widgetCRD, c.from, c.to, 1)
		code, resp, _ := do(t, s, http.MethodPost, crdPath, "application/json", body)
		st := decode[status](t, resp)
		found := false
		for _, cause := range st.Details.Causes {
			found = found || cause.Field == c.field
		}
		if code != http.StatusUnprocessableEntity || !found {
			t.Errorf("%s: %d %s", c.name, code, resp)
		}
	}
}

// CRDs stored before a restart are served again when the server is ready.
func TestCRDServedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := testserver.Start(t, testserver.Options{Storage: "bolt", DataDir: dir})
	createWidgetCRD(t, s)
	if code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"kept"},"spec":{"image":"nginx"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	s.Stop(t)
	s = testserver.Start(t, testserver.Options{Storage: "bolt", DataDir: dir})
	code, body, _ := do(t, s, http.MethodGet, widgetsPath+"/kept", "", "")
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"image":"nginx"`)) {
		t.Errorf("after restart: %d %s", code, body)
	}
}

// DeleteOptions in the body may carry the resource's group version, as
// client-go's clients for custom kinds send them; another kind is a 400.
func TestDeleteOptionsInAnyGroupVersion(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)
	if code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"image":"nginx"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body, _ := do(t, s, http.MethodDelete, widgetsPath+"/w", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","propagationPolicy":"Background"}`); code != http.StatusBadRequest {
		t.Errorf("delete with a Widget body: %d %s", code, body)
	}
	if code, body, _ := do(t, s, http.MethodDelete, widgetsPath+"/w", "application/json",
		`{"apiVersion":"example.com/v1","kind":"DeleteOptions","propagationPolicy":"Foreground"}`); code != http.StatusOK {
		t.Errorf("delete with example.com/v1 DeleteOptions: %d %s", code, body)
	}
}

// Server-side apply on a custom resource: create, a second manager's
// conflicting value is a 409 naming the field, force takes it over, and
// the CRD's schema is the type (replicas is an integer).
func TestServerSideApplyOnCustomResource(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)
	apply := func(manager, force, body string) (int, []byte) {
		code, resp, _ := do(t, s, http.MethodPatch, widgetsPath+"/ssa?fieldManager="+manager+force, "application/apply-patch+yaml", body)
		return code, resp
	}
	code, body := apply("alice", "", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ssa}\nspec: {image: nginx, replicas: 2}\n")
	if code != http.StatusCreated || !bytes.Contains(body, []byte(`"manager":"alice"`)) || !bytes.Contains(body, []byte(`"operation":"Apply"`)) {
		t.Fatalf("apply create: %d %s", code, body)
	}
	code, body = apply("bob", "", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ssa}\nspec: {image: nginx, replicas: 3}\n")
	if st := decode[status](t, body); code != http.StatusConflict || !strings.Contains(st.Message, ".spec.replicas") {
		t.Errorf("conflicting apply: %d %s", code, body)
	}
	code, body = apply("bob", "&force=true", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ssa}\nspec: {image: nginx, replicas: 3}\n")
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"replicas":3`)) || !bytes.Contains(body, []byte(`"manager":"bob"`)) {
		t.Errorf("forced apply: %d %s", code, body)
	}
	code, body = apply("alice", "", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ssa}\nspec: {image: nginx, replicas: many}\n")
	if st := decode[status](t, body); code != http.StatusBadRequest || !strings.Contains(st.Message, ".spec.replicas: expected numeric") {
		t.Errorf("apply with a string replicas: %d %s", code, body)
	}
}

// Changing a CRD takes effect at once: a new served version appears, the
// new schema validates, and the objects stay.
func TestCRDUpdateTakesEffect(t *testing.T) {
	s, _ := start(t, nil)
	createWidgetCRD(t, s)
	if code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"image":"nginx","replicas":9}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	// Lower the maximum to 5 and serve a v2 beside v1.
	patch := `[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/replicas/maximum","value":5},
	  {"op":"add","path":"/spec/versions/-","value":{"name":"v2","served":true,"storage":false,
	   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}]`
	if code, body, _ := do(t, s, http.MethodPatch, crdPath+"/widgets.example.com", "application/json-patch+json", patch); code != http.StatusOK {
		t.Fatalf("patch CRD: %d %s", code, body)
	}
	waitFor(t, "v2 served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, "/apis/example.com/v2/namespaces/default/widgets/w", "", "")
		return code == http.StatusOK
	})
	waitFor(t, "the new maximum enforced", func() bool {
		code, _, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w6"},"spec":{"image":"nginx","replicas":6}}`)
		return code == http.StatusUnprocessableEntity
	})
	code, body, _ := do(t, s, http.MethodGet, widgetsPath+"/w", "", "")
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"replicas":9`)) {
		t.Errorf("object after the CRD change: %d %s", code, body)
	}
}

// checkScaleOwnership checks, as kube-apiserver records a write through
// the scale subresource, that manager's entry of subresource scale (with
// no time) owns the replicas and that no other entry does.
func checkScaleOwnership(t *testing.T, body []byte, manager string) {
	t.Helper()
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range obj.ManagedFields {
		var fields struct {
			Spec map[string]any `json:"f:spec"`
		}
		if e.FieldsV1 != nil {
			_ = json.Unmarshal(e.FieldsV1.Raw, &fields)
		}
		_, owns := fields.Spec["f:replicas"]
		switch {
		case e.Manager == manager && e.Subresource == "scale":
			found = true
			if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Time != nil || string(e.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` {
				t.Errorf("the scale entry %+v (%s)", e, e.FieldsV1.Raw)
			}
		case owns:
			t.Errorf("%s (subresource %q) still owns the replicas after the scale: %s", e.Manager, e.Subresource, e.FieldsV1.Raw)
		}
	}
	if !found {
		t.Errorf("no managedFields entry of %s through the scale subresource: %s", manager, body)
	}
}
