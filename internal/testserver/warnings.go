package testserver

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Warned sends body as a create (POST, JSON) or a merge patch (PATCH) and
// fails the test unless the answer's code is want; it returns the texts of
// the answer's Warning headers, in order.
func (s *Server) Warned(t testing.TB, method, path, body string, want int) []string {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	code, out, h := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return WarningTexts(t, h)
}

// WarningTexts are the messages of an answer's Warning headers
// (`299 - "text"`), in order.
func WarningTexts(t testing.TB, h http.Header) []string {
	t.Helper()
	var out []string
	for _, v := range h.Values("Warning") {
		msg, err := strconv.Unquote(strings.TrimPrefix(v, "299 - "))
		if err != nil {
			t.Fatalf("warning %q: %v", v, err)
		}
		out = append(out, msg)
	}
	return out
}

// WantWarnings fails the test unless got are the warnings want, in order.
func WantWarnings(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: warnings\n%q\nwant\n%q", what, got, want)
	}
}
