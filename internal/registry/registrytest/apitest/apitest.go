// Package apitest sends requests to a real API server (package
// testserver) and checks the answers as kube-apiserver gives them: the
// Status of a refusal (code, reason, message, causes) and that a refused
// write left storage as it was. Tests only.
package apitest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Call sends method path as the admin with a JSON body ("" for none; a
// PATCH is a merge patch) and returns the status code and the body.
func Call(t testing.TB, s *testserver.Server, method, path, body string) (int, []byte) {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	if body == "" {
		code, out, _ := s.Do(t, method, path, "", nil)
		return code, out
	}
	code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
	return code, out
}

// Must sends a request that must answer want, and decodes the answer into
// out (when not nil).
func Must(t testing.TB, s *testserver.Server, method, path, body string, want int, out any) {
	t.Helper()
	code, b := Call(t, s, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// Refusal is the Status a request must be refused with. Causes are
// "field:Type" (for example "spec.user:FieldValueInvalid"), in order;
// Message is compared whole unless it ends in "…", then as a prefix.
type Refusal struct {
	Code    int32
	Reason  metav1.StatusReason
	Message string
	Causes  []string
}

// ExpectRefusal checks that body is the Status want describes.
func ExpectRefusal(t testing.TB, code int, body []byte, want Refusal) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
		t.Fatalf("answer %d is not a Status: %s", code, body)
	}
	if int32(code) != want.Code || st.Code != want.Code || st.Reason != want.Reason {
		t.Errorf("answer %d %s (Status code %d), want %d %s\n%s", code, st.Reason, st.Code, want.Code, want.Reason, body)
	}
	if prefix, ok := strings.CutSuffix(want.Message, "…"); ok {
		if !strings.HasPrefix(st.Message, prefix) {
			t.Errorf("message\n  %s\nwant prefix\n  %s", st.Message, prefix)
		}
	} else if st.Message != want.Message {
		t.Errorf("message\n  %s\nwant\n  %s", st.Message, want.Message)
	}
	var causes []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			causes = append(causes, c.Field+":"+string(c.Type))
		}
	}
	if !slices.Equal(causes, want.Causes) {
		t.Errorf("causes %q, want %q", causes, want.Causes)
	}
}

// Snapshot returns what a consistent list of path holds: its
// resourceVersion (the store's current revision) and items, as JSON. Two
// equal snapshots mean nothing was written in between.
func Snapshot(t testing.TB, s *testserver.Server, path string) string {
	t.Helper()
	var list struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	Must(t, s, http.MethodGet, path, "", http.StatusOK, &list)
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Case is a request a server must refuse, leaving the collection at
// List unchanged.
type Case struct {
	Name         string
	Method, Path string
	Body         string
	List         string
	Want         Refusal
}

// RunRefusals sends each case and checks its refusal and that List (the
// namespaces when empty) is unchanged afterwards.
func RunRefusals(t *testing.T, s *testserver.Server, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			list := c.List
			if list == "" {
				list = "/api/v1/namespaces"
			}
			before := Snapshot(t, s, list)
			code, body := Call(t, s, c.Method, c.Path, c.Body)
			ExpectRefusal(t, code, body, c.Want)
			if after := Snapshot(t, s, list); after != before {
				t.Errorf("%s changed:\nbefore %s\nafter  %s", list, before, after)
			}
		})
	}
}
