package apiserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// gizmoCRD has two served versions whose schemas give spec.size different
// rules: v1 (storage) size < v1Limit, v2 size < 5.
func gizmoCRD(v1Rule, v1Message string) string {
	version := func(name string, storage bool, rule, message string) string {
		s := "false"
		if storage {
			s = "true"
		}
		return `{"name":"` + name + `","served":true,"storage":` + s + `,"schema":{"openAPIV3Schema":{"type":"object","properties":{
     "spec":{"type":"object","properties":{"size":{"type":"integer","x-kubernetes-validations":[{"rule":"` + rule + `","message":"` + message + `"}]}}}}}}}`
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.cel.example.com"},
 "spec":{"group":"cel.example.com","scope":"Namespaced","names":{"plural":"gizmos","kind":"Gizmo"},
  "versions":[` + version("v1", true, v1Rule, v1Message) + `,` + version("v2", false, "self < 5", "v2 allows less than 5") + `]}}`
}

func gizmo(version, name string, size int) string {
	return `{"apiVersion":"cel.example.com/` + version + `","kind":"Gizmo","metadata":{"name":"` + name + `"},"spec":{"size":` + strconv.Itoa(size) + `}}`
}

// TestCustomResourceRulesPerVersionAndCRDChange: each version of a CRD is
// validated with its own schema's rules, and a CRD update that changes a
// rule takes effect (the compiled rules and their schema adapters belong
// to the schema they were compiled from). Refused writes store nothing.
func TestCustomResourceRulesPerVersionAndCRDChange(t *testing.T) {
	s, kv := start(t, nil)
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", gizmoCRD("self < 10", "v1 allows less than 10")); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	path := func(version string) string { return "/apis/cel.example.com/" + version + "/namespaces/default/gizmos" }
	waitFor(t, "gizmos served", func() bool {
		c1, _, _ := do(t, s, http.MethodGet, path("v1"), "", "")
		c2, _, _ := do(t, s, http.MethodGet, path("v2"), "", "")
		return c1 == http.StatusOK && c2 == http.StatusOK
	})
	const key = "/registry/cel.example.com/gizmos/default/"

	if code, body, _ := do(t, s, http.MethodPost, path("v1"), "application/json", gizmo("v1", "g1", 7)); code != http.StatusCreated {
		t.Fatalf("create v1 size 7: %d %s", code, body)
	}
	code, body, _ := do(t, s, http.MethodPost, path("v2"), "application/json", gizmo("v2", "g2", 7))
	checkInvalid(t, code, body, "cel.example.com", "Gizmo", "g2", inv(`Gizmo.cel.example.com "g2" is invalid: spec.size: Invalid value: 7: v2 allows less than 5`,
		invalidCause("spec.size", "7: v2 allows less than 5")))
	unchanged(t, kv, key+"g2", nil)

	// Tighten v1's rule (again on a conflict: the CRD's controller writes
	// its status meanwhile).
	updated := decode[map[string]any](t, []byte(gizmoCRD("self < 3", "v1 allows less than 3")))
	waitFor(t, "the CRD updated", func() bool {
		code, body, _ := do(t, s, http.MethodGet, crdPath+"/gizmos.cel.example.com", "", "")
		if code != http.StatusOK {
			t.Fatalf("get CRD: %d %s", code, body)
		}
		crd := decode[map[string]any](t, body)
		crd["spec"] = updated["spec"]
		code, body, _ = do(t, s, http.MethodPut, crdPath+"/gizmos.cel.example.com", "application/json", string(mustJSON(t, crd)))
		if code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("update CRD: %d %s", code, body)
		}
		return code == http.StatusOK
	})
	waitFor(t, "the tightened v1 rule served", func() bool {
		code, body, _ := do(t, s, http.MethodPost, path("v1")+"?dryRun=All", "application/json", gizmo("v1", "probe", 4))
		return code == http.StatusUnprocessableEntity && strings.Contains(string(body), "v1 allows less than 3")
	})
	code, body, _ = do(t, s, http.MethodPost, path("v1"), "application/json", gizmo("v1", "g3", 4))
	checkInvalid(t, code, body, "cel.example.com", "Gizmo", "g3", inv(`Gizmo.cel.example.com "g3" is invalid: spec.size: Invalid value: 4: v1 allows less than 3`,
		invalidCause("spec.size", "4: v1 allows less than 3")))
	unchanged(t, kv, key+"g3", nil)
	if code, body, _ := do(t, s, http.MethodPost, path("v1"), "application/json", gizmo("v1", "g4", 2)); code != http.StatusCreated {
		t.Errorf("create v1 size 2: %d %s", code, body)
	}
	// v2 keeps its own rule.
	if code, body, _ := do(t, s, http.MethodPost, path("v2"), "application/json", gizmo("v2", "g5", 4)); code != http.StatusCreated {
		t.Errorf("create v2 size 4: %d %s", code, body)
	}
	code, body, _ = do(t, s, http.MethodPost, path("v2"), "application/json", gizmo("v2", "g6", 6))
	checkInvalid(t, code, body, "cel.example.com", "Gizmo", "g6", inv(`Gizmo.cel.example.com "g6" is invalid: spec.size: Invalid value: 6: v2 allows less than 5`,
		invalidCause("spec.size", "6: v2 allows less than 5")))
	unchanged(t, kv, key+"g6", nil)
}
