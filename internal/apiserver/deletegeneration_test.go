package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDeletionStartMovesGeneration: as in Kubernetes, the write that
// starts a deletion (deletionTimestamp set, held by a finalizer or a
// grace period) increments metadata.generation once; later deletes of the
// same object do not move it again.
func TestDeletionStartMovesGeneration(t *testing.T) {
	s, _ := start(t, nil)
	get := func(t *testing.T, path string) fullObject {
		t.Helper()
		code, out, _ := s.Do(t, http.MethodGet, path, "", nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, out)
		}
		return decode[fullObject](t, out)
	}
	del := func(t *testing.T, path, body string) {
		t.Helper()
		code, out, _ := s.Do(t, http.MethodDelete, path, "application/json", strings.NewReader(body))
		if code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("DELETE %s: %d %s", path, code, out)
		}
	}

	// A deployment deleted in the foreground is held by its finalizer.
	code, out, _ := s.Do(t, http.MethodPost, deployPath, "application/json", strings.NewReader(deployment("1", "web", "web")))
	if code != http.StatusCreated {
		t.Fatal(code, string(out))
	}
	path := deployPath + "/" + decode[fullObject](t, out).Metadata.Name
	if g := get(t, path).Metadata.Generation; g != 1 {
		t.Fatalf("generation %d after create", g)
	}
	del(t, path, `{"propagationPolicy":"Foreground"}`)
	d := get(t, path)
	if d.Metadata.DeletionTimestamp == nil || d.Metadata.Generation != 2 {
		t.Errorf("after the foreground delete: deletionTimestamp %v generation %d, want set and 2", d.Metadata.DeletionTimestamp, d.Metadata.Generation)
	}
	del(t, path, `{"propagationPolicy":"Foreground"}`)
	if g := get(t, path).Metadata.Generation; g != 2 {
		t.Errorf("a second delete moved generation to %d", g)
	}

	// A pod bound to a node is deleted gracefully: the same.
	const podPath = "/api/v1/namespaces/default/pods"
	code, out, _ = s.Do(t, http.MethodPost, podPath, "application/json",
		strings.NewReader(`{"metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"nginx"}]}}`))
	if code != http.StatusCreated {
		t.Fatal(code, string(out))
	}
	g0 := get(t, podPath+"/p").Metadata.Generation
	del(t, podPath+"/p", `{"gracePeriodSeconds":60}`)
	p := get(t, podPath+"/p")
	if p.Metadata.DeletionTimestamp == nil || p.Metadata.Generation != g0+1 {
		t.Errorf("after a graceful delete: deletionTimestamp %v generation %d, want set and %d", p.Metadata.DeletionTimestamp, p.Metadata.Generation, g0+1)
	}
	del(t, podPath+"/p", `{"gracePeriodSeconds":30}`) // shortened: no new generation
	if p := get(t, podPath+"/p"); p.Metadata.Generation != g0+1 || *p.Metadata.DeletionGracePeriodSeconds != 30 {
		t.Errorf("after shortening: generation %d grace %d", p.Metadata.Generation, *p.Metadata.DeletionGracePeriodSeconds)
	}
}
