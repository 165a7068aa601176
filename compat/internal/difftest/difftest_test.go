package difftest

import (
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true},
		{"core/v1/pods/*", "core/v1/pods/valid", true},
		{"core/v1/pods/*", "core/v1/podsx/valid", false},
		{"a/{b,c}/d", "a/c/d", true},
		{"a/{b,c}/d", "a/e/d", false},
		{"body.spec.{x,y[0].z}*", "body.spec.y[0].z.w", true},
		{"paths[*]", "paths[\"/a\"]", true},
		{"p/{name}/x", "p/{name}/x", true},
	} {
		if got := Glob(c.pattern, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %t, want %t", c.pattern, c.s, got, c.want)
		}
	}
}

func TestDiffAndNormalize(t *testing.T) {
	now := time.Now().UTC().Format(time.RFC3339)
	ref := DecodeJSON([]byte(`{"metadata":{"name":"gen-abcde","generateName":"gen-","uid":"6b5c8f27-0000-4000-8000-000000000001","resourceVersion":"12","creationTimestamp":"` + now + `"},"message":"the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (12)","spec":{"clusterIP":"10.96.0.9"}}`))
	sp := DecodeJSON([]byte(`{"metadata":{"name":"gen-xyzzy","generateName":"gen-","uid":"6b5c8f27-0000-4000-8000-000000000002","resourceVersion":"7","creationTimestamp":"` + now + `"},"message":"the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (7)","spec":{"clusterIP":"10.96.0.10"},"extra":1}`))
	n := Normalization{Masks: []string{"spec.clusterIP"}}
	changes := Diff(Normalize(ref, n), Normalize(sp, n))
	if len(changes) != 1 || changes[0].Path != "extra" || changes[0].Ref != Absent {
		t.Fatalf("changes = %+v, want only extra", changes)
	}
}

func TestAllowlistMatch(t *testing.T) {
	a := &Allowlist{
		NotServed:   []NotServed{{Resource: "apps/v1/statefulsets", Owner: "x", Why: "y"}},
		Differences: []Entry{{Category: "cases", Cases: []string{"core/v1/pods/{a,b}"}, Path: "body.*", What: "w", Why: "y", Owner: "o"}},
		used:        map[string]int{},
	}
	if a.Match(Difference{Category: "cases", Case: "apps/v1/statefulsets/valid"}) == "" {
		t.Error("a not-served resource's case is not covered")
	}
	if a.Match(Difference{Category: "cases", Case: "core/v1/pods/b", Path: "body.x"}) == "" {
		t.Error("an entry with cases does not cover one of them")
	}
	if a.Match(Difference{Category: "cases", Case: "core/v1/pods/c", Path: "body.x"}) != "" {
		t.Error("an entry covers a case it does not name")
	}
	if u := a.Unused(); len(u) != 0 {
		t.Errorf("Unused = %v", u)
	}

	// Once setpoint serves the resource, its entry covers nothing and is
	// reported unused, so that the kind's differences show.
	a = &Allowlist{NotServed: []NotServed{{Resource: "apps/v1/statefulsets", Owner: "x", Why: "y"}}, used: map[string]int{}}
	a.SetServed(func(r string) bool { return r == "apps/v1/statefulsets" })
	if a.Match(Difference{Category: "cases", Case: "apps/v1/statefulsets/valid"}) != "" {
		t.Error("a not-served entry covers a served resource's case")
	}
	if u := a.Unused(); len(u) != 1 || u[0] != "notServed apps/v1/statefulsets" {
		t.Errorf("Unused = %v, want the stale not-served entry", u)
	}
}

func TestNormalizeUser(t *testing.T) {
	a := DecodeJSON([]byte(`{"spec":{"username":"setpoint-admin","groups":["setpoint-admin","x"],"note":"setpoint-admin did it"}}`))
	b := DecodeJSON([]byte(`{"spec":{"username":"admin","groups":["admin","x"],"note":"admin did it"}}`))
	Normalize(a, Normalization{User: "setpoint-admin"})
	Normalize(b, Normalization{User: "admin"})
	d := Diff(a, b)
	if len(d) != 1 || d[0].Path != "spec.note" {
		t.Errorf("differences after normalizing the user = %v, want only spec.note (a substring is kept)", d)
	}
}
