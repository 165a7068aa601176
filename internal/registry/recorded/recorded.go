// Package recorded replays requests whose answers were recorded from a real
// kube-apiserver against setpoint's API server, and compares the answers:
// the HTTP code, the Status reason, message and causes of a refusal (and
// that the store is unchanged after it), or the created object, less what
// differs between any two servers (uid, timestamps, resourceVersion,
// managed fields). Tests only.
//
// The cases live in a JSON file per kind (testdata/*.json of the kind's
// package). Setting REFTEST_RECORD to the kubeconfig of a running
// kube-apiserver v1.37 (the reference) runs the cases that have no answer
// yet there instead, and writes its answers into the file.
package recorded

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// Namespace is where the cases run, on both servers.
const Namespace = "kinds-workloads"

// Case is one request and the reference's answer to it.
type Case struct {
	Name string `json:"name"`
	// Path is the collection the objects live in, with {ns} for Namespace
	// (e.g. /apis/batch/v1/namespaces/{ns}/jobs).
	Path string `json:"path"`
	// Base, when set, is created first; the request then patches it
	// (a JSON merge patch to Path/<name>[/Subresource]). Without Base the
	// request creates Body.
	Base        json.RawMessage `json:"base,omitempty"`
	Subresource string          `json:"subresource,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
	// Table, for a successful request, also reads the object as a
	// meta.k8s.io Table (what kubectl get prints) and compares its columns
	// and cells (ages excepted).
	Table bool `json:"table,omitempty"`
	// Query, when set, makes the request a list of the collection with
	// these parameters (after Base is created); the answer keeps the
	// names of the items.
	Query string `json:"query,omitempty"`
	// IgnoreStatus leaves the written object's status out of the
	// comparison (a controller of the reference writes it meanwhile).
	IgnoreStatus bool `json:"ignoreStatus,omitempty"`
	// MessageDiffers explains why setpoint's message differs (the causes'
	// fields and reasons are compared all the same).
	MessageDiffers string `json:"messageDiffers,omitempty"`
	// Want is the reference's answer.
	Want *Answer `json:"want,omitempty"`
}

// Answer is what a server answered.
type Answer struct {
	Code    int     `json:"code"`
	Reason  string  `json:"reason,omitempty"`
	Message string  `json:"message,omitempty"`
	Causes  []Cause `json:"causes,omitempty"`
	// Object is the written object, normalized, for successful requests.
	Object map[string]any `json:"object,omitempty"`
	// Table is the object as a Table, when the case asks for it.
	Table *Table `json:"table,omitempty"`
}

// Table is the part of a meta.k8s.io Table that servers must agree on:
// the columns ("name type format priority") and the one row's cells, with
// ages written "<age>".
type Table struct {
	Columns []string `json:"columns"`
	Cells   []any    `json:"cells"`
}

// Cause is one cause of a refusal.
type Cause struct {
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// server sends requests to one API server.
type server struct {
	url, token string
	client     *http.Client
}

func (s *server) do(t *testing.T, method, path, ctype string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	switch {
	case method == http.MethodGet && ctype != "":
		req.Header.Set("Accept", ctype)
	case body != nil:
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// Run replays the cases of file against a fresh setpoint API server, or
// records them from the reference when REFTEST_RECORD is set.
func Run(t *testing.T, file string) {
	cases := load(t, file)
	if kc := os.Getenv("REFTEST_RECORD"); kc != "" {
		record(t, file, kc, cases)
		return
	}
	ts := testserver.Start(t, testserver.Options{})
	s := &server{url: ts.URL, token: ts.Token, client: ts.Client}
	ensureNamespace(t, s)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Want == nil {
				t.Fatal("no recorded answer: run with REFTEST_RECORD")
			}
			createBase(t, s, c)
			before := list(t, s, c)
			got := request(t, s, c)
			compare(t, c, got)
			if got.Code >= 400 {
				if after := list(t, s, c); after != before {
					t.Errorf("store changed by a refused request: resourceVersion and items were\n%s\nand are\n%s", before, after)
				}
			}
		})
	}
}

func load(t *testing.T, file string) []Case {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cases
}

func record(t *testing.T, file, kubeconfig string, cases []Case) {
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.TLS.CAData)
	s := &server{url: cfg.Host, token: cfg.BearerToken, client: &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}}
	ensureNamespace(t, s)
	for i := range cases {
		if cases[i].Want != nil {
			continue // recorded already: delete the answer to record it again
		}
		createBase(t, s, cases[i])
		got := request(t, s, cases[i])
		cases[i].Want = &got
		cleanup(t, s, cases[i])
	}
	b, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d cases into %s", len(cases), file)
}

func ensureNamespace(t *testing.T, s *server) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, Namespace)
	if code, out := s.do(t, http.MethodPost, "/api/v1/namespaces", "application/json", []byte(body)); code != 201 && code != 409 {
		t.Fatalf("create namespace: %d %s", code, out)
	}
}

func collection(c Case) string { return strings.ReplaceAll(c.Path, "{ns}", Namespace) }

// createBase creates the object a case patches, if any.
func createBase(t *testing.T, s *server, c Case) {
	t.Helper()
	if c.Base == nil {
		return
	}
	if code, out := s.do(t, http.MethodPost, collection(c), "application/json", c.Base); code != 201 {
		t.Fatalf("%s: create base: %d %s", c.Name, code, out)
	}
}

// request sends a case's request: a create, or a merge patch of its base.
func request(t *testing.T, s *server, c Case) Answer {
	t.Helper()
	switch {
	case c.Query != "":
		code, out := s.do(t, http.MethodGet, collection(c)+"?"+c.Query, "", nil)
		if code >= 400 {
			return answer(t, code, out)
		}
		return Answer{Code: code, Object: map[string]any{"items": itemNames(t, out)}}
	case c.Base == nil:
		code, out := s.do(t, http.MethodPost, collection(c), "application/json", c.Body)
		return withTable(t, s, c, answer(t, code, out))
	}
	code, out := s.do(t, http.MethodPatch, objectPath(t, c), "application/merge-patch+json", c.Body)
	return withTable(t, s, c, answer(t, code, out))
}

const tableMediaType = "application/json;as=Table;v=v1;g=meta.k8s.io"

// withTable adds the written object's Table to a successful answer when
// the case asks for it.
func withTable(t *testing.T, s *server, c Case, a Answer) Answer {
	if !c.Table || a.Code >= 400 {
		return a
	}
	md, _ := a.Object["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	code, out := s.do(t, http.MethodGet, collection(c)+"/"+name, tableMediaType, nil)
	if code != 200 {
		t.Fatalf("%s: get table: %d %s", c.Name, code, out)
	}
	var tbl struct {
		ColumnDefinitions []struct {
			Name, Type, Format string
			Priority           int
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out, &tbl); err != nil || len(tbl.Rows) != 1 {
		t.Fatalf("%s: table: %v %s", c.Name, err, out)
	}
	a.Table = &Table{Cells: tbl.Rows[0].Cells}
	for i, col := range tbl.ColumnDefinitions {
		a.Table.Columns = append(a.Table.Columns, fmt.Sprintf("%s %s %s %d", col.Name, col.Type, col.Format, col.Priority))
		if col.Name == "Age" && i < len(a.Table.Cells) {
			a.Table.Cells[i] = "<age>"
		}
	}
	for i, v := range a.Table.Cells {
		if str, ok := v.(string); ok {
			a.Table.Cells[i] = uuids.ReplaceAllString(str, "UID")
		}
	}
	return a
}

func itemNames(t *testing.T, list []byte) []any {
	var l struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatal(err)
	}
	names := []any{}
	for _, it := range l.Items {
		names = append(names, it.Metadata.Name)
	}
	return names
}

func objectPath(t *testing.T, c Case) string {
	var m struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := json.Unmarshal(c.Base, &m); err != nil {
		t.Fatal(err)
	}
	p := collection(c) + "/" + m.Metadata.Name
	if c.Subresource != "" {
		p += "/" + c.Subresource
	}
	return p
}

// cleanup deletes what a case created on the reference.
func cleanup(t *testing.T, s *server, c Case) {
	obj := c.Base
	if obj == nil {
		obj = c.Body
	}
	var m struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if json.Unmarshal(obj, &m) != nil || m.Metadata.Name == "" {
		return
	}
	s.do(t, http.MethodDelete, collection(c)+"/"+m.Metadata.Name, "application/json", []byte(`{"propagationPolicy":"Background"}`))
}

func answer(t *testing.T, code int, body []byte) Answer {
	t.Helper()
	a := Answer{Code: code}
	if code < 400 {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Fatalf("decode answer: %v: %s", err, body)
		}
		a.Object = normalize(t, obj)
		return a
	}
	var st struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Details struct {
			Causes []Cause `json:"causes"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("decode status: %v: %s", err, body)
	}
	a.Reason, a.Message, a.Causes = st.Reason, uuids.ReplaceAllString(st.Message, "UID"), st.Details.Causes
	for i := range a.Causes {
		a.Causes[i].Message = uuids.ReplaceAllString(a.Causes[i].Message, "UID")
	}
	return a
}

// uuids matches the uids a message may name (a job's generated selector).
var uuids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalize drops what differs between two servers from a written object
// and writes its uid (which a job's labels repeat) as "UID".
func normalize(t *testing.T, obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	for _, k := range []string{"uid", "creationTimestamp", "resourceVersion", "managedFields"} {
		delete(md, k)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if uid != "" {
		b = bytes.ReplaceAll(b, []byte(uid), []byte("UID"))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// list renders the collection's resourceVersion and its objects' names
// and resourceVersions, to show a refused request changed nothing.
func list(t *testing.T, s *server, c Case) string {
	t.Helper()
	code, out := s.do(t, http.MethodGet, collection(c), "", nil)
	if code != 200 {
		t.Fatalf("list %s: %d %s", collection(c), code, out)
	}
	var l struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Items    []struct {
			Metadata struct{ Name, ResourceVersion string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatal(err)
	}
	r := "list " + l.Metadata.ResourceVersion
	for _, it := range l.Items {
		r += ", " + it.Metadata.Name + " " + it.Metadata.ResourceVersion
	}
	return r
}

func compare(t *testing.T, c Case, got Answer) {
	t.Helper()
	want := *c.Want
	if got.Code != want.Code || got.Reason != want.Reason {
		t.Fatalf("answer %d %s %q, want %d %s %q", got.Code, got.Reason, got.Message, want.Code, want.Reason, want.Message)
	}
	if want.Object != nil {
		if c.IgnoreStatus {
			delete(got.Object, "status")
			delete(want.Object, "status")
		}
		if want.Table != nil {
			gt, _ := json.Marshal(got.Table)
			wt, _ := json.Marshal(want.Table)
			if !bytes.Equal(gt, wt) {
				t.Errorf("table\n got %s\nwant %s", gt, wt)
			}
		}
		g, w := flatten("", got.Object, nil), flatten("", want.Object, nil)
		for k, v := range w {
			if g[k] != v {
				t.Errorf("%s = %s, want %s", k, orMissing(g, k), v)
			}
		}
		for k, v := range g {
			if _, ok := w[k]; !ok {
				t.Errorf("%s = %s, want it absent", k, v)
			}
		}
		return
	}
	key := func(cs []Cause, withMessage bool) []string {
		out := make([]string, len(cs))
		for i, x := range cs {
			out[i] = x.Field + " " + x.Reason
			if withMessage {
				out[i] += ": " + x.Message
			}
		}
		return out
	}
	exact := c.MessageDiffers == ""
	if exact && got.Message != want.Message {
		t.Errorf("message\n got %s\nwant %s", got.Message, want.Message)
	}
	if g, w := key(got.Causes, exact), key(want.Causes, exact); !slices.Equal(g, w) {
		t.Errorf("causes\n got %q\nwant %q", g, w)
	}
}

// flatten lists the leaves of a decoded JSON value by path.
func flatten(prefix string, v any, out map[string]string) map[string]string {
	if out == nil {
		out = map[string]string{}
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = "{}"
		}
		for k, e := range x {
			flatten(prefix+"."+k, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
	return out
}

func orMissing(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "(absent)"
}
