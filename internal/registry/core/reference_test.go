package core_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// The reference tests replay scenarios (scenarios_test.go) against a real
// API server and compare each answer with what kube-apiserver v1.37.2
// answered to the same requests, recorded in testdata/reference/. A
// refused write must also leave the collection it addressed unchanged.
//
// To record the answers again, run against a live kube-apiserver:
//
//	go test ./internal/registry/core -run TestReference -reference-kubeconfig /work/refdump/kubeconfig
//
// which replays the scenarios there (in a namespace of its own) and
// rewrites the recordings.
var referenceKubeconfig = flag.String("reference-kubeconfig", "", "record the reference scenarios from the kube-apiserver of this kubeconfig")

// step is one request of a scenario. Paths and bodies may name {ns}, the
// scenario's namespace, also used as a prefix of cluster-scoped names.
type step struct {
	name, method, path, body string
	// accept is the Accept header ("" for JSON); table asks for a Table.
	accept string
	// check is what is compared: the code only ("code"), the code and
	// the warning ("warning"), or the code, the warning and the
	// normalized body (default).
	check string
	// drop names top-level fields of the answer left out (what a
	// controller of the reference may have written by then: "status").
	drop []string
}

const (
	checkCode    = "code"
	checkWarning = "warning"
	tableMT      = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

// recorded is what a server answered to a step, normalized.
type recorded struct {
	Step    string          `json:"step"`
	Code    int             `json:"code"`
	Warning string          `json:"warning,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
}

// client sends requests to one API server.
type client struct {
	base, token string
	http        *http.Client
}

func (c *client) do(t *testing.T, method, path, ctype, accept string, body []byte) (int, []byte, http.Header) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

func serverClient(s *testserver.Server) *client {
	return &client{base: s.URL, token: s.Token, http: s.Client}
}

func kubeconfigClient(t *testing.T, path string) *client {
	cfg, err := rest.ConfigFromKubeconfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	ca := cfg.TLS.CAData
	if len(ca) == 0 && cfg.TLS.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLS.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	pool.AppendCertsFromPEM(ca)
	return &client{base: cfg.Host, token: cfg.BearerToken, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}}
}

func TestReference(t *testing.T) {
	if *referenceKubeconfig != "" {
		recordReference(t, kubeconfigClient(t, *referenceKubeconfig))
		return
	}
	c := serverClient(testserver.Start(t, testserver.Options{}))
	const ns = "kinds-core-ref"
	createNamespace(t, c, ns)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := readRecording(t, sc.name)
			if len(want) != len(sc.steps) {
				t.Fatalf("%d recorded answers for %d steps: record again", len(want), len(sc.steps))
			}
			for i, st := range sc.steps {
				before := collectionState(t, c, ns, st)
				got := replay(t, c, ns, st)
				if !reflect.DeepEqual(canonical(t, got), canonical(t, want[i])) {
					t.Errorf("step %q:\n got %s\nwant %s", st.name, show(got), show(want[i]))
				}
				if got.Code >= 400 && st.method != http.MethodGet && before != "" {
					if after := collectionState(t, c, ns, st); after != before {
						t.Errorf("step %q: a refused %s changed the store:\nbefore %s\nafter  %s", st.name, st.method, before, after)
					}
				}
			}
		})
	}
}

// recordReference replays every scenario against the reference and
// rewrites the recordings.
func recordReference(t *testing.T, c *client) {
	ns := fmt.Sprintf("kinds-core-rec-%d", time.Now().Unix()%100000)
	createNamespace(t, c, ns)
	defer cleanupReference(t, c, ns)
	for _, sc := range scenarios {
		var out []recorded
		for _, st := range sc.steps {
			out = append(out, replay(t, c, ns, st))
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordingPath(sc.name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanupReference deletes the namespace and the cluster-scoped objects
// the scenarios created on the reference.
func cleanupReference(t *testing.T, c *client, ns string) {
	for _, sc := range scenarios {
		for _, st := range sc.steps {
			if st.method == http.MethodPost && strings.HasPrefix(st.path, "/api/v1/persistentvolumes") {
				var obj struct {
					Metadata struct{ Name string } `json:"metadata"`
				}
				if json.Unmarshal([]byte(expand(st.body, ns)), &obj) == nil && obj.Metadata.Name != "" {
					c.do(t, http.MethodDelete, "/api/v1/persistentvolumes/"+obj.Metadata.Name, "", "", nil)
				}
			}
		}
	}
	c.do(t, http.MethodDelete, "/api/v1/namespaces/"+ns, "", "", nil)
}

func recordingPath(name string) string {
	return filepath.Join("testdata", "reference", name+".json")
}

func readRecording(t *testing.T, name string) []recorded {
	b, err := os.ReadFile(recordingPath(name))
	if err != nil {
		t.Fatal(err)
	}
	var out []recorded
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func createNamespace(t *testing.T, c *client, ns string) {
	code, body, _ := c.do(t, http.MethodPost, "/api/v1/namespaces", "application/json", "", []byte(`{"metadata":{"name":"`+ns+`"}}`))
	if code != http.StatusCreated {
		t.Fatalf("create namespace %s: %d %s", ns, code, body)
	}
}

func expand(s, ns string) string { return strings.ReplaceAll(s, "{ns}", ns) }

// replay sends one step and normalizes the answer.
func replay(t *testing.T, c *client, ns string, st step) recorded {
	t.Helper()
	ctype := "application/json"
	if st.method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	var body []byte
	if st.body != "" {
		body = []byte(expand(st.body, ns))
	}
	accept := st.accept
	if accept == "table" {
		accept = tableMT
	}
	code, out, h := c.do(t, st.method, expand(st.path, ns), ctype, accept, body)
	r := recorded{Step: st.name, Code: code, Warning: strings.ReplaceAll(h.Get("Warning"), ns, "{ns}")}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("step %q: %d %s", st.name, code, out)
	}
	n := normalize(v, ns)
	if m, ok := n.(map[string]any); ok {
		for _, k := range st.drop {
			delete(m, k)
		}
	}
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	r.Body = b
	switch st.check {
	case checkCode:
		r.Body, r.Warning = nil, ""
	case checkWarning:
		r.Body = nil
	}
	return r
}

// Fields whose values differ from run to run, or between kube-apiserver
// and setpoint for reasons outside these kinds: identities, versions and
// times; the protection finalizers kube-apiserver's admission adds to
// volumes and claims (setpoint runs no controller that would remove them);
// the ages and object metadata in tables.
var volatile = map[string]bool{
	"uid": true, "resourceVersion": true, "creationTimestamp": true, "managedFields": true,
	"deletionTimestamp": true, "lastTransitionTime": true, "lastPhaseTransitionTime": true,
}

var protectionFinalizers = []any{"kubernetes.io/pvc-protection", "kubernetes.io/pv-protection"}

func normalize(v any, ns string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if volatile[k] {
				continue
			}
			out[k] = normalize(val, ns)
		}
		if f, ok := out["finalizers"].([]any); ok {
			f = slices.DeleteFunc(f, func(e any) bool { return slices.Contains(protectionFinalizers, e) })
			if len(f) == 0 {
				delete(out, "finalizers")
			} else {
				out["finalizers"] = f
			}
		}
		if d, ok := out["details"].(map[string]any); ok && len(d) == 0 {
			delete(out, "details") // setpoint always sends details, kube-apiserver not always
		}
		if out["kind"] == "Table" {
			normalizeTable(out)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i], ns)
		}
		return out
	case string:
		return strings.ReplaceAll(x, ns, "{ns}")
	}
	return v
}

// normalizeTable keeps the column names, types, formats and priorities and
// the cells, without ages and dates.
func normalizeTable(t map[string]any) {
	cols, _ := t["columnDefinitions"].([]any)
	var ages []int
	for i, c := range cols {
		m := c.(map[string]any)
		delete(m, "description")
		if m["name"] == "Age" || m["type"] == "date" {
			ages = append(ages, i)
		}
	}
	rows, _ := t["rows"].([]any)
	for _, r := range rows {
		m := r.(map[string]any)
		delete(m, "object")
		cells := m["cells"].([]any)
		for _, i := range ages {
			cells[i] = "<time>"
		}
	}
	delete(t, "metadata")
}

// canonical makes a recorded answer comparable: the body decoded.
func canonical(t *testing.T, r recorded) any {
	var body any
	if len(r.Body) > 0 {
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
	}
	return []any{r.Code, r.Warning, body}
}

func show(r recorded) string {
	return fmt.Sprintf("%d %q %s", r.Code, r.Warning, r.Body)
}

// collectionState is the list of the collection a write addressed (its
// resourceVersion and items), "" for requests that are not writes to a
// stored collection.
func collectionState(t *testing.T, c *client, ns string, st step) string {
	if st.method == http.MethodGet || strings.Contains(st.path, "/bindings") || strings.Contains(st.path, "/binding") ||
		strings.Contains(st.path, "componentstatuses") {
		return ""
	}
	p := expand(st.path, ns)
	if i := strings.Index(p, "?"); i >= 0 {
		p = p[:i]
	}
	parts := strings.Split(strings.TrimPrefix(p, "/api/v1/"), "/")
	switch {
	case parts[0] == "namespaces" && len(parts) >= 3:
		p = "/api/v1/namespaces/" + parts[1] + "/" + parts[2]
	default:
		p = "/api/v1/" + parts[0]
	}
	code, out, _ := c.do(t, http.MethodGet, p, "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("list %s: %d %s", p, code, out)
	}
	return string(out)
}
