package apiserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestPatchThatDoesNotApplyIs422NamingNoResource: a JSON patch whose test
// operation fails (or whose path is missing) is refused as kube-apiserver
// refuses it: 422 Invalid with the generic message and empty details, which
// kubectl prints as "The request is invalid: the server rejected our
// request ..." (not `The configmaps "" is invalid`, which it printed when
// the details named the resource).
func TestPatchThatDoesNotApplyIs422NamingNoResource(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "existing", map[string]string{"a": "1"})
	for _, p := range []string{
		`[{"op":"test","path":"/data/a","value":"2"}]`,
		`[{"op":"replace","path":"/nope/x","value":1}]`,
	} {
		code, body, _ := s.Do(t, http.MethodPatch, cmPath+"/existing", "application/json-patch+json", strings.NewReader(p))
		var st struct {
			Kind, Status, Message, Reason string
			Code                          int
			Details                       map[string]any
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		if code != http.StatusUnprocessableEntity || st.Code != 422 || st.Kind != "Status" || st.Status != "Failure" || st.Reason != "Invalid" ||
			st.Message != "the server rejected our request due to an error in our request" || !reflect.DeepEqual(st.Details, map[string]any{}) {
			t.Errorf("patch %s: HTTP %d %s", p, code, body)
		}
	}
}
