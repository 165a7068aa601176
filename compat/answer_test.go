package compat

import (
	"context"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// answer is what a client sees of a response, as a JSON value to compare:
// code, media type, Warning headers, and the body (decoded and normalized
// when it is JSON, else its text).
func answer(r *difftest.Response, n difftest.Normalization) map[string]any {
	a := map[string]any{"code": difftest.Number(r.Code), "contentType": r.MediaType()}
	if w := r.Header.Values("Warning"); len(w) > 0 {
		ws := make([]any, len(w))
		for i, s := range w {
			ws[i] = s
		}
		a["warnings"] = ws
	}
	body := r.JSON()
	if body == nil && r.MediaType() == "application/yaml" {
		if j, err := yaml.YAMLToJSON(r.Body); err == nil {
			body = difftest.DecodeJSON(j)
		}
	}
	if body != nil {
		a["body"] = body
	} else if len(r.Body) > 0 {
		a["text"] = string(r.Body)
	}
	n.User = r.User
	difftest.Normalize(a, n)
	return a
}

// both sends a request to both sides; a transport failure fails the test.
func both(t testing.TB, r difftest.Request) difftest.Pair {
	t.Helper()
	p, err := difftest.Both(context.Background(), env.ref, env.sp, r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// compareAnswers sends r to both sides and records the differences of their
// answers under caseID; shape (may be nil) reshapes each side's answer
// (filtering what is compared elsewhere, keying lists) before the diff.
func compareAnswers(t testing.TB, rep *difftest.Report, caseID string, r difftest.Request, n difftest.Normalization, shape func(side string, a map[string]any)) difftest.Pair {
	t.Helper()
	p := both(t, r)
	ra, sa := answer(p.Ref, n), answer(p.SP, n)
	if shape != nil {
		shape(env.ref.Name, ra)
		shape(env.sp.Name, sa)
	}
	rep.Compare(caseID, ra, sa)
	return p
}
