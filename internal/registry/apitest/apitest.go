// Package apitest sends objects of a kind to a real API server
// (internal/testserver) over HTTPS and compares what it answers with what
// kube-apiserver answers: status code, reason, message and causes of
// rejections (with the store unchanged afterwards), and the stored form of
// valid objects. Tests only.
package apitest

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Server is a running API server with helpers for the kind tables.
type Server struct {
	*testserver.Server
}

// Start runs a server (memory storage) until the test ends.
func Start(t *testing.T) *Server {
	t.Helper()
	return &Server{testserver.Start(t, testserver.Options{})}
}

// Rejection is a write the server must refuse as kube-apiserver does.
type Rejection struct {
	Name string
	// Method is POST (the default) or PUT; Path the collection (POST) or
	// the object (PUT, with /status for the subresource).
	Method, Path string
	// Body is the object in YAML or JSON (POST). For PUT, Mutate changes
	// the object read from Path (without the subresource) instead.
	Body   string
	Mutate func(obj map[string]any)
	// What kube-apiserver answers.
	Code    int
	Reason  metav1.StatusReason
	Message string
	// Causes are "field:Type" in order.
	Causes []string
}

// Reject runs the rejections; the collection at list (a path; "" for the
// collection each case writes to) must be the same before and after each.
func (s *Server) Reject(t *testing.T, list string, cases []Rejection) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			list := list
			if list == "" {
				list = collectionOf(c)
			}
			before := s.List(t, list)
			method, body := c.Method, []byte(c.Body)
			if method == "" {
				method = "POST"
			}
			if method == "PUT" {
				obj := s.GetMap(t, strings.TrimSuffix(c.Path, "/status"))
				c.Mutate(obj)
				body = mustJSON(t, obj)
			} else if j, err := yaml.YAMLToJSON(body); err != nil {
				t.Fatalf("body: %v", err)
			} else {
				body = j
			}
			code, out, _ := s.Do(t, method, c.Path, "application/json", bytes.NewReader(body))
			var st metav1.Status
			if err := json.Unmarshal(out, &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%d %s: not a Status (%v)", code, out, err)
			}
			if code != c.Code || st.Code != int32(c.Code) || st.Reason != c.Reason {
				t.Errorf("got %d %s (code %d), want %d %s", code, st.Reason, st.Code, c.Code, c.Reason)
			}
			if st.Message != c.Message {
				t.Errorf("message\n got: %s\nwant: %s", st.Message, c.Message)
			}
			var causes []string
			if st.Details != nil {
				for _, cause := range st.Details.Causes {
					causes = append(causes, cause.Field+":"+string(cause.Type))
				}
			}
			if !reflect.DeepEqual(causes, c.Causes) {
				t.Errorf("causes\n got: %q\nwant: %q", causes, c.Causes)
			}
			if after := s.List(t, list); !reflect.DeepEqual(before, after) {
				t.Errorf("store changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// collectionOf returns the collection a rejection writes to.
func collectionOf(c Rejection) string {
	if c.Method != "PUT" {
		return c.Path
	}
	p := strings.TrimSuffix(c.Path, "/status")
	return p[:strings.LastIndex(p, "/")]
}

// Listing is the resourceVersion of a list and of each of its items.
type Listing struct {
	ResourceVersion string
	Items           map[string]string
}

// List reads a collection.
func (s *Server) List(t *testing.T, path string) Listing {
	t.Helper()
	var l struct {
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	s.getJSON(t, path, &l)
	out := Listing{ResourceVersion: l.Metadata.ResourceVersion, Items: map[string]string{}}
	for _, i := range l.Items {
		out.Items[i.Metadata.Namespace+"/"+i.Metadata.Name] = i.Metadata.ResourceVersion
	}
	return out
}

// GetMap reads an object as a JSON map.
func (s *Server) GetMap(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	s.getJSON(t, path, &m)
	return m
}

func (s *Server) getJSON(t *testing.T, path string, into any) {
	t.Helper()
	code, out, _ := s.Do(t, "GET", path, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, out)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// Write sends body (YAML or JSON) with method to path and returns the code
// and the answer as a JSON map.
func (s *Server) Write(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		j, err := yaml.YAMLToJSON([]byte(b))
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		raw = j
	default:
		raw = mustJSON(t, b)
	}
	code, out, _ := s.Do(t, method, path, "application/json", bytes.NewReader(raw))
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return code, m
}

// Create POSTs body to the collection path, expects 201 and returns the
// created object.
func (s *Server) Create(t *testing.T, path, body string) map[string]any {
	t.Helper()
	code, out := s.Write(t, "POST", path, body)
	if code != http.StatusCreated {
		t.Fatalf("create at %s: %d %v", path, code, out)
	}
	return out
}

// ExpectStored fails unless got equals want (YAML or JSON) once the
// system metadata (uid, creationTimestamp, resourceVersion, managedFields)
// is removed from got; want holds the rest of what kube-apiserver stores.
func ExpectStored(t *testing.T, got map[string]any, want string) {
	t.Helper()
	g := maps.Clone(got)
	m, _ := g["metadata"].(map[string]any)
	m = maps.Clone(m)
	for _, k := range []string{"uid", "creationTimestamp", "resourceVersion", "managedFields"} {
		delete(m, k)
	}
	g["metadata"] = m
	j, err := yaml.YAMLToJSON([]byte(want))
	if err != nil {
		t.Fatalf("want: %v", err)
	}
	var w map[string]any
	if err := json.Unmarshal(j, &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("stored\n got: %s\nwant: %s", mustJSON(t, g), mustJSON(t, w))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Table reads path as a meta.k8s.io/v1 Table and returns its column names
// and the cells of its rows.
func (s *Server) Table(t *testing.T, path string) ([]string, [][]any) {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tbl struct {
		Columns []struct{ Name string } `json:"columnDefinitions"`
		Rows    []struct{ Cells []any } `json:"rows"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("table %s: %d %v", path, resp.StatusCode, err)
	}
	cols := make([]string, len(tbl.Columns))
	for i, c := range tbl.Columns {
		cols[i] = c.Name
	}
	rows := make([][]any, len(tbl.Rows))
	for i, r := range tbl.Rows {
		rows[i] = r.Cells
	}
	return cols, rows
}

// Select lists path with a field selector and returns the status code, the
// names of the items (on success) and the message (on failure).
func (s *Server) Select(t *testing.T, path, fieldSelector string) (int, []string, string) {
	t.Helper()
	code, out, _ := s.Do(t, "GET", path+"?fieldSelector="+url.QueryEscape(fieldSelector), "", nil)
	var l struct {
		Message string `json:"message"`
		Items   []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatalf("select %s: %v", path, err)
	}
	names := []string{}
	for _, i := range l.Items {
		names = append(names, i.Metadata.Name)
	}
	return code, names, l.Message
}
