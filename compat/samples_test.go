package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// samplesNamespace holds the namespaced samples of the tables category.
const samplesNamespace = "compat-samples"

// loadSamples reads testdata/samples.yaml: one object per document, in
// file order (the Namespace first).
func loadSamples() ([]map[string]any, error) {
	b, err := os.ReadFile("testdata/samples.yaml")
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(b), "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("samples.yaml: %w", err)
		}
		obj, _ := difftest.DecodeJSON(j).(map[string]any)
		if obj == nil || obj["kind"] == nil {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// sampleFor returns a copy of the first sample of a resource's kind and
// group-version, or nil.
func sampleFor(samples []map[string]any, r apiResource) map[string]any {
	for _, s := range samples {
		if s["apiVersion"] == r.GroupVersion() && s["kind"] == r.Kind {
			return difftest.Clone(s).(map[string]any)
		}
	}
	return nil
}

// resourceOf finds the reference's top-level resource serving an object's
// apiVersion and kind.
func resourceOf(obj map[string]any) (apiResource, bool) {
	for _, r := range refResources("") {
		if obj["apiVersion"] == r.GroupVersion() && obj["kind"] == r.Kind {
			return r, true
		}
	}
	return apiResource{}, false
}

// objectPath is the collection path of an object's resource in its
// namespace (ns replaces the object's own for namespaced kinds).
func objectPath(r apiResource, ns string) string { return r.Path(ns) }

// ensureNamespace creates a namespace on both sides and its default
// ServiceAccount (kube-apiserver's ServiceAccount admission wants it before
// a Pod is created; the suite runs no controller manager, whose job that
// is). Setpoint gets the same ServiceAccount once it serves the kind.
func ensureNamespace(t testing.TB, name string) {
	t.Helper()
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	p := both(t, difftest.Request{Method: "POST", Path: "/api/v1/namespaces", Body: []byte(ns)})
	for _, r := range []*difftest.Response{p.Ref, p.SP} {
		if r.Code != 201 && r.Code != 409 {
			t.Fatalf("creating namespace %s: %d %s", name, r.Code, r.Body)
		}
	}
	sa := []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`)
	both(t, difftest.Request{Method: "POST", Path: "/api/v1/namespaces/" + name + "/serviceaccounts", Body: sa})
}

// marshal encodes a decoded JSON value.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// samplesOnce creates every sample on both sides once per run.
var samplesOnce struct {
	sync.Once
	samples []map[string]any
	// created holds both answers of each sample's creation, by
	// "<resource id>/<name>".
	created map[string]difftest.Pair
	err     error
}

func createSamples(t testing.TB) ([]map[string]any, map[string]difftest.Pair) {
	t.Helper()
	samplesOnce.Do(func() {
		samplesOnce.samples, samplesOnce.err = loadSamples()
		if samplesOnce.err != nil {
			return
		}
		samplesOnce.created = map[string]difftest.Pair{}
		ensureNamespace(t, samplesNamespace)
		for _, s := range samplesOnce.samples {
			r, ok := resourceOf(s)
			if !ok || r.Name == "namespaces" {
				continue
			}
			obj := difftest.Clone(s).(map[string]any)
			name, _ := difftest.Get(obj, "metadata.name").(string)
			if r.Namespaced {
				obj["metadata"].(map[string]any)["namespace"] = samplesNamespace
			}
			p := both(t, difftest.Request{Method: "POST", Path: objectPath(r, samplesNamespace), Body: marshal(obj)})
			samplesOnce.created[r.ID()+"/"+name] = p
			if r.Name == "customresourcedefinitions" {
				waitEstablished(t, objectPath(r, "")+"/"+name)
			}
		}
	})
	if samplesOnce.err != nil {
		t.Fatal(samplesOnce.err)
	}
	return samplesOnce.samples, samplesOnce.created
}

// allocated are, per resource, the paths of values a server allocates
// (and that therefore differ between two servers), in answers of the
// suite: objects (body...), lists (body.items...) and tables (body.rows...).
var allocated = map[string][]string{
	"core/v1/services": {"body.spec.clusterIP", "body.spec.clusterIPs*", "body.spec.ports[*].nodePort",
		"body.items[*].spec.clusterIP", "body.items[*].spec.clusterIPs*", "body.items[*].spec.ports[*].nodePort",
		"body.rows[*].cells[2]", "body.rows[*].cells[4]", "body.rows[*].object.spec.clusterIP*"},
}

// normFor is the normalization of a resource's answers.
func normFor(id string) difftest.Normalization {
	for prefix, masks := range allocated {
		if id == prefix || strings.HasPrefix(id, prefix+"/") {
			return difftest.Normalization{Masks: masks}
		}
	}
	return difftest.Normalization{}
}

// waitEstablished waits (up to 10 s) until both sides report the CRD at
// path Established, as a client waits before it uses one: how soon each
// server's controller gets there is not what the suite compares.
func waitEstablished(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, side := range []*difftest.Side{env.ref, env.sp} {
		for {
			resp, err := side.Do(context.Background(), difftest.Request{Path: path})
			if err == nil && established(resp.JSON()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s is not Established after 10 s", side.Name, path)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func established(crd any) bool {
	conds, _ := difftest.Get(crd, "status.conditions").([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
