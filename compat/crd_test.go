package compat

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// crdManifest is a CustomResourceDefinition of kind Widget in group, with
// a status and a scale subresource, a printer column and a short name.
func crdManifest(group string) string {
	return fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.%[1]s"},
"spec":{"group":"%[1]s","scope":"Namespaced",
 "names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wdg"],"categories":["compat"]},
 "versions":[{"name":"v1","served":true,"storage":true,
  "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
  "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Mode","type":"string","jsonPath":".spec.mode","priority":1}],
  "schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","required":["size"],"properties":{
    "size":{"type":"integer","minimum":0},"replicas":{"type":"integer"},
    "mode":{"type":"string","enum":["fast","slow"],"default":"slow"}}},
   "status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`, group)
}

// createCRDs creates a Widget CRD in each group on both sides (in the
// given order) and waits until both serve them.
func createCRDs(t testing.TB, groups ...string) {
	t.Helper()
	for _, g := range groups {
		p := both(t, difftest.Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crdManifest(g))})
		for _, r := range []*difftest.Response{p.Ref, p.SP} {
			if r.Code != 201 && r.Code != 409 {
				t.Fatalf("creating the CRD of %s: %d %s", g, r.Code, r.Body)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, g := range groups {
		// Serving and discovery are updated apart on both servers (each
		// publishes a new group in discovery a moment after it serves it),
		// so wait for the resource, the legacy and the aggregated /apis.
		checks := []struct {
			what string
			req  difftest.Request
			ok   func(*difftest.Response) bool
		}{
			{"serve", difftest.Request{Path: "/apis/" + g + "/v1/namespaces/default/widgets"}, nil},
			{"list in /apis", difftest.Request{Path: "/apis"}, mentions(g)},
			{"list in aggregated /apis", difftest.Request{Path: "/apis", Header: map[string]string{"Accept": aggregatedAccept}}, mentions(g)},
		}
		for _, s := range []*difftest.Side{env.ref, env.sp} {
			for _, c := range checks {
				for {
					resp, err := s.Do(context.Background(), c.req)
					if err == nil && resp.Code == 200 && (c.ok == nil || c.ok(resp)) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s does not %s %s/v1 widgets", s.Name, c.what, g)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}
	}
}

// mentions reports whether a discovery answer names group.
func mentions(group string) func(*difftest.Response) bool {
	return func(r *difftest.Response) bool {
		return bytes.Contains(r.Body, []byte(`"`+group+`"`))
	}
}
