package discoveryv1_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestLabelsMoveGeneration: as kube-apiserver's strategy, a label change
// moves an EndpointSlice's generation as an endpoint change does; an
// annotation change does not.
func TestLabelsMoveGeneration(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
	write := func(method, path, ctype, body string) discoveryv1.EndpointSlice {
		t.Helper()
		code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
		var eps discoveryv1.EndpointSlice
		if code >= 300 || json.Unmarshal(out, &eps) != nil {
			t.Fatalf("%s %s: %d %s", method, path, code, out)
		}
		return eps
	}
	eps := write(http.MethodPost, slices, "application/json", `{"metadata":{"name":"web"},"addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"]}]}`)
	if eps.Generation != 1 {
		t.Fatalf("created with generation %d", eps.Generation)
	}
	for _, c := range []struct {
		patch string
		want  int64
	}{
		{`{"metadata":{"labels":{"a":"b"}}}`, 2},
		{`{"metadata":{"annotations":{"a":"b"}}}`, 2},
		{`{"endpoints":[{"addresses":["10.0.0.2"]}]}`, 3},
		{`{"metadata":{"labels":null}}`, 4},
	} {
		if eps = write(http.MethodPatch, slices+"/web", "application/merge-patch+json", c.patch); eps.Generation != c.want {
			t.Errorf("after %s: generation %d, want %d", c.patch, eps.Generation, c.want)
		}
	}
}
