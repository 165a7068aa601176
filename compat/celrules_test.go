package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// The celrules category: the CustomResourceDefinitions of the real-world
// corpus (Gateway API, prometheus-operator, cert-manager, KEDA; read at
// test time from the corpus directory, never edited) and the suite's own
// Widget CRD, installed on both servers; the corpus's example objects of
// those CRDs applied as run.sh applies them (server-side apply); then a
// table of objects per CRD family (testdata/celrules.yaml) that the
// x-kubernetes-validations rules refuse, created, updated or written
// through /status, with the whole answers compared.

const (
	// realworldEnv overrides where the corpus is (default
	// testdata/realworld: the sources this category reads, copied).
	realworldEnv = "SETPOINT_REALWORLD"
	// celNamespace holds every namespaced object of the category.
	celNamespace = "celdiff"
	crdsPath     = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	// caseTimeout bounds one write: a rule that runs until the per-call
	// cost limit stops it takes tens of seconds under -race.
	caseTimeout = 2 * time.Minute
)

// celSources are the corpus directories whose CRDs the category installs.
var celSources = []string{"04-cert-manager-crds", "05-prometheus-operator", "07-gateway-api", "11-keda-crds"}

// celCaseFile is testdata/celrules.yaml.
type celCaseFile struct {
	// CRDs are the suite's own CRDs, installed beside the corpus's.
	CRDs []map[string]any `json:"crds"`
	// Cases run in order.
	Cases []celCase `json:"cases"`
}

// celCase is one write: Object is created (POST); with Patch, Object must
// be accepted by both and Patch (a JSON merge patch) is then sent to the
// object, or to its /status with Status. Every answer is compared.
type celCase struct {
	Name     string         `json:"name"`
	Resource string         `json:"resource"` // group/version/plural
	Object   map[string]any `json:"object"`
	Patch    map[string]any `json:"patch,omitempty"`
	Status   bool           `json:"status,omitempty"`
}

// crdInfo is what the category needs of an installed CRD.
type crdInfo struct {
	name, group, plural, kind string
	namespaced                bool
	storage                   string
	body                      []byte
}

func TestCELRules(t *testing.T) {
	dir := os.Getenv(realworldEnv)
	if dir == "" {
		dir = "testdata/realworld"
	}
	b, err := os.ReadFile("testdata/celrules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file celCaseFile
	if err := yaml.UnmarshalStrict(b, &file); err != nil {
		t.Fatalf("testdata/celrules.yaml: %v", err)
	}
	crds, examples := loadCorpus(t, dir)
	for _, c := range file.CRDs {
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crdFromJSON(t, "testdata/celrules.yaml", body))
	}
	rep := difftest.NewReport(t, env.allow, "celrules", env.sink)
	defer rep.Finish()

	ensureOwnNamespace(t, celNamespace)
	byResource := installCRDs(t, crds)
	t.Logf("installed %d CRDs on both sides", len(crds))
	applyExamples(t, rep, byResource, examples)
	for _, c := range file.Cases {
		runCELCase(t, rep, byResource, c)
	}
	t.Logf("%d cases compared", rep.Cases())
}

// loadCorpus reads the CRDs of celSources and their example objects
// (documents of the CRDs' groups).
func loadCorpus(t *testing.T, dir string) ([]crdInfo, []corpusDoc) {
	t.Helper()
	var crds []crdInfo
	var rest []corpusDoc
	for _, src := range celSources {
		files, err := filepath.Glob(filepath.Join(dir, src, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, f := range files {
			docs, err := splitYAML(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				if d.kind == "CustomResourceDefinition" {
					crds = append(crds, crdFromJSON(t, d.source, d.json))
				} else {
					rest = append(rest, d)
				}
			}
		}
	}
	groups := map[string]bool{}
	for _, c := range crds {
		groups[c.group] = true
	}
	var examples []corpusDoc
	for _, d := range rest {
		if groups[d.group] {
			examples = append(examples, d)
		}
	}
	return crds, examples
}

// corpusDoc is one document of a corpus file, as JSON.
type corpusDoc struct {
	source, kind, group, version, name string
	json                               []byte
}

// splitYAML reads the documents of a multi-document YAML file, as run.sh
// splits them (on lines starting with ---).
func splitYAML(path string) ([]corpusDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []corpusDoc
	for i, part := range bytes.Split(append([]byte("\n"), b...), []byte("\n---")) {
		j, err := yaml.YAMLToJSON(part)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(j, &head); err != nil || head.Kind == "" {
			continue // empty or comment-only
		}
		group, version, ok := strings.Cut(head.APIVersion, "/")
		if !ok {
			group, version = "", group
		}
		out = append(out, corpusDoc{source: filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path),
			kind: head.Kind, group: group, version: version, name: head.Metadata.Name, json: j})
	}
	return out, nil
}

// crdFromJSON reads a CRD's names, scope and storage version.
func crdFromJSON(t *testing.T, source string, body []byte) crdInfo {
	t.Helper()
	var crd struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Group string `json:"group"`
			Scope string `json:"scope"`
			Names struct {
				Plural string `json:"plural"`
				Kind   string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name    string `json:"name"`
				Storage bool   `json:"storage"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &crd); err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	info := crdInfo{name: crd.Metadata.Name, group: crd.Spec.Group, plural: crd.Spec.Names.Plural,
		kind: crd.Spec.Names.Kind, namespaced: crd.Spec.Scope == "Namespaced", body: body}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			info.storage = v.Name
		}
	}
	return info
}

// ensureOwnNamespace creates ns on each side that lacks it, and deletes it at
// the end from the sides it was created on.
func ensureOwnNamespace(t *testing.T, ns string) {
	t.Helper()
	for _, s := range []*difftest.Side{env.ref, env.sp} {
		resp := do(t, s, difftest.Request{Method: "POST", Path: "/api/v1/namespaces",
			Body: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)})
		switch resp.Code {
		case 201:
			s := s
			t.Cleanup(func() { do(t, s, difftest.Request{Method: "DELETE", Path: "/api/v1/namespaces/" + ns}) })
		case 409:
		default:
			t.Fatalf("%s: creating namespace %s: %d %s", s.Name, ns, resp.Code, resp.Body)
		}
	}
}

// installCRDs creates each CRD on each side that does not have it yet
// (the reference may be shared: a CRD found there is used as it is and
// left in place), deletes at the end the ones it created, and waits until
// both sides serve every CRD's storage version. It returns the CRDs by
// resource (group/version/plural, every version).
func installCRDs(t *testing.T, crds []crdInfo) map[string]crdInfo {
	t.Helper()
	byResource := map[string]crdInfo{}
	for _, c := range crds {
		for _, s := range []*difftest.Side{env.ref, env.sp} {
			if resp := do(t, s, difftest.Request{Path: crdsPath + "/" + c.name}); resp.Code == 200 {
				continue
			}
			resp := do(t, s, difftest.Request{Method: "POST", Path: crdsPath, Body: c.body, Timeout: 2 * time.Minute})
			if resp.Code != 201 {
				t.Errorf("%s refuses the CRD %s: %d %s", s.Name, c.name, resp.Code, difftest.Render(resp.JSON(), 600))
				continue
			}
			s, name := s, c.name
			t.Cleanup(func() { do(t, s, difftest.Request{Method: "DELETE", Path: crdsPath + "/" + name}) })
		}
		var versions []struct {
			Name string `json:"name"`
		}
		var spec struct {
			Spec struct {
				Versions *[]struct {
					Name string `json:"name"`
				} `json:"versions"`
			} `json:"spec"`
		}
		spec.Spec.Versions = &versions
		if err := json.Unmarshal(c.body, &spec); err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			byResource[c.group+"/"+v.Name+"/"+c.plural] = c
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// Generous: setpoint under -race on a loaded machine takes minutes to
	// serve 34 large CRDs.
	deadline := time.Now().Add(5 * time.Minute)
	for _, c := range crds {
		path := resourcePath(c, c.group+"/"+c.storage+"/"+c.plural)
		for _, s := range []*difftest.Side{env.ref, env.sp} {
			for {
				if resp := do(t, s, difftest.Request{Path: path}); resp.Code == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s does not serve %s", s.Name, path)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	return byResource
}

// resourcePath is the collection path of resource (group/version/plural)
// in celNamespace when the CRD is namespaced.
func resourcePath(c crdInfo, resource string) string {
	group, rest, _ := strings.Cut(resource, "/")
	version, plural, _ := strings.Cut(rest, "/")
	if c.namespaced {
		return "/apis/" + group + "/" + version + "/namespaces/" + celNamespace + "/" + plural
	}
	return "/apis/" + group + "/" + version + "/" + plural
}

// applyExamples applies the corpus's example objects with server-side
// apply, as run.sh does, in celNamespace, comparing the answers.
func applyExamples(t *testing.T, rep *difftest.Report, byResource map[string]crdInfo, examples []corpusDoc) {
	t.Helper()
	for _, d := range examples {
		var c crdInfo
		for id, info := range byResource {
			if info.kind == d.kind && strings.HasPrefix(id, d.group+"/"+d.version+"/") {
				c = info
			}
		}
		if c.name == "" {
			t.Errorf("%s: no CRD serves %s %s/%s", d.source, d.kind, d.group, d.version)
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(d.json, &obj); err != nil {
			t.Fatal(err)
		}
		if c.namespaced {
			obj["metadata"].(map[string]any)["namespace"] = celNamespace
		}
		body, _ := json.Marshal(obj)
		item := resourcePath(c, d.group+"/"+d.version+"/"+c.plural) + "/" + d.name
		req := difftest.Request{Method: "PATCH", Path: item + "?fieldManager=celdiff&force=true",
			Header: map[string]string{"Content-Type": "application/apply-patch+yaml"}, Body: body}
		caseID := "example/" + d.source + "/" + d.kind + "/" + d.name
		p := compareAnswers(t, rep, caseID, req, difftest.Normalization{}, nil)
		for _, r := range []*difftest.Response{p.Ref, p.SP} {
			if r.Code != 200 && r.Code != 201 {
				t.Errorf("%s: %s refuses the example: %d %s", caseID, sideName(p, r), r.Code, difftest.Render(r.JSON(), 400))
			}
		}
		t.Cleanup(func() { both(t, difftest.Request{Method: "DELETE", Path: item}) })
	}
}

// runCELCase sends one case to both sides.
func runCELCase(t *testing.T, rep *difftest.Report, byResource map[string]crdInfo, c celCase) {
	t.Helper()
	info, ok := byResource[c.Resource]
	if c.Resource == "apiextensions.k8s.io/v1/customresourcedefinitions" {
		info, ok = crdInfo{}, true
	}
	if !ok {
		t.Errorf("case %s: no CRD serves %s", c.Name, c.Resource)
		return
	}
	obj := difftest.Clone(any(c.Object)).(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if info.namespaced {
		meta["namespace"] = celNamespace
	}
	body, _ := json.Marshal(obj)
	path := resourcePath(info, c.Resource)
	if info.name == "" {
		path = crdsPath
	}
	p := compareAnswers(t, rep, c.Name+"/create", difftest.Request{Method: "POST", Path: path, Body: body, Timeout: caseTimeout}, difftest.Normalization{}, unorderedCauses)
	logAnswer(t, c.Name+"/create", p.Ref)
	item := path + "/" + name
	if p.Ref.Code == 201 || p.SP.Code == 201 {
		defer both(t, difftest.Request{Method: "DELETE", Path: item})
	}
	if c.Patch == nil {
		return
	}
	if p.Ref.Code != 201 || p.SP.Code != 201 {
		t.Errorf("case %s: the object to update is refused (reference %d, setpoint %d): %s", c.Name, p.Ref.Code, p.SP.Code, difftest.Render(p.Ref.JSON(), 400))
		return
	}
	patch, _ := json.Marshal(c.Patch)
	target := item
	if c.Status {
		target += "/status"
	}
	p = compareAnswers(t, rep, c.Name+"/update", difftest.Request{Method: "PATCH", Path: target,
		Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: patch, Timeout: caseTimeout}, difftest.Normalization{}, unorderedCauses)
	logAnswer(t, c.Name+"/update", p.Ref)
}

// logAnswer logs the reference's answer to a case (go test -v), to see
// which rules a case reaches.
func logAnswer(t *testing.T, caseID string, r *difftest.Response) {
	t.Helper()
	msg, _ := difftest.Get(r.JSON(), "message").(string)
	t.Logf("%s: %d %s %v", caseID, r.Code, msg, r.Header.Values("Warning"))
}

// unorderedCauses sorts the causes of a 422 by field, and the errors its
// message lists alike: kube-apiserver walks the properties of an object
// (to run its validation rules) and of a CRD's schema (to check it) in Go
// map order, so the order of errors of different fields changes from one
// request to the next; the errors of one field keep their order. The
// message is rebuilt only when it is exactly the list of the causes.
func unorderedCauses(_ string, a map[string]any) {
	causes, _ := difftest.Get(a, "body.details.causes").([]any)
	msg, _ := difftest.Get(a, "body.message").(string)
	if len(causes) < 2 {
		return
	}
	head, _, ok := strings.Cut(msg, ": [")
	listed := ok && msg == head+": ["+joinCauses(causes)+"]"
	sort.SliceStable(causes, func(i, j int) bool {
		return causeText(causes[i], "field") < causeText(causes[j], "field")
	})
	if listed {
		a["body"].(map[string]any)["message"] = head + ": [" + joinCauses(causes) + "]"
	}
}

// joinCauses is the list of errors a 422's message carries.
func joinCauses(causes []any) string {
	items := make([]string, len(causes))
	for i, c := range causes {
		items[i] = causeText(c, "message")
		if f := causeText(c, "field"); f != "" {
			items[i] = f + ": " + items[i]
		}
	}
	return strings.Join(items, ", ")
}

func causeText(c any, key string) string {
	s, _ := difftest.Get(c, key).(string)
	return s
}

// do sends r to one side; a transport failure fails the test.
func do(t testing.TB, s *difftest.Side, r difftest.Request) *difftest.Response {
	t.Helper()
	resp, err := s.Do(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func sideName(p difftest.Pair, r *difftest.Response) string {
	if r == p.Ref {
		return env.ref.Name
	}
	return env.sp.Name
}
