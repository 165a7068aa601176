// Package admissiontest drives the admission plugins' tests over real
// HTTP against a real API server (internal/testserver): raw requests,
// the Status of a refusal, and the check that a refusal left the store
// as it was.
package admissiontest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Server is a running API server and the test using it.
type Server struct {
	*testserver.Server
	t testing.TB
}

// Start runs a server with opts for the test.
func Start(t testing.TB, opts testserver.Options) *Server {
	t.Helper()
	return &Server{Server: testserver.Start(t, opts), t: t}
}

// Do sends method path with body (JSON-encoded unless nil or []byte) as
// the admin, and returns the code and the body.
func (s *Server) Do(method, path string, body any) (int, []byte) {
	s.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Accept", "application/json")
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// MustDo is Do that fails the test unless the answer is 2xx; it decodes
// the answer into out when out is not nil.
func (s *Server) MustDo(method, path string, body, out any) {
	s.t.Helper()
	code, raw := s.Do(method, path, body)
	if code/100 != 2 {
		s.t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
}

// CreateNamespace creates namespace name.
func (s *Server) CreateNamespace(name string) {
	s.t.Helper()
	s.MustDo(http.MethodPost, "/api/v1/namespaces", map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}, nil)
}

// Refusal is the Status a refused request must answer.
type Refusal struct {
	Code    int32
	Reason  metav1.StatusReason
	Message string
	// Name and Kind are the Status details' (both empty: no details).
	Name, Kind string
}

// WantRefused sends the write and checks it is refused with want, and
// that the collection list (a path) holds the same objects before and
// after (same names and resourceVersions).
func (s *Server) WantRefused(method, path string, body any, list string, want Refusal) {
	s.t.Helper()
	before := s.snapshot(list)
	code, raw := s.Do(method, path, body)
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil || st.Kind != "Status" {
		s.t.Fatalf("%s %s: %d, want a Status: %s", method, path, code, raw)
	}
	if int32(code) != want.Code || st.Code != want.Code || st.Reason != want.Reason || st.Message != want.Message || st.Status != metav1.StatusFailure {
		s.t.Errorf("%s %s:\n got %d %s %q\nwant %d %s %q", method, path, st.Code, st.Reason, st.Message, want.Code, want.Reason, want.Message)
	}
	switch {
	case st.Details == nil && want.Name == "" && want.Kind == "":
	case st.Details == nil || st.Details.Name != want.Name || st.Details.Kind != want.Kind:
		s.t.Errorf("%s %s: details %+v, want name %q kind %q", method, path, st.Details, want.Name, want.Kind)
	}
	if after := s.snapshot(list); !equal(before, after) {
		s.t.Errorf("%s %s refused but %s changed:\n before %v\n after  %v", method, path, list, before, after)
	}
}

// snapshot maps the names of the objects of a list to their
// resourceVersions.
func (s *Server) snapshot(list string) map[string]string {
	s.t.Helper()
	var l struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	s.MustDo(http.MethodGet, list, nil, &l)
	out := map[string]string{}
	for _, it := range l.Items {
		out[it.Metadata.Namespace+"/"+it.Metadata.Name] = it.Metadata.ResourceVersion
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
