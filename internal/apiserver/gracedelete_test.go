package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSecondDeleteOfATerminatingPod: as in Kubernetes (rest.BeforeDelete),
// a delete without a grace period leaves a pending graceful deletion alone
// (it does not fall back to the pod's terminationGracePeriodSeconds), and
// a shorter grace period moves the deadline back from when the deletion
// began, not from now.
func TestSecondDeleteOfATerminatingPod(t *testing.T) {
	s, _ := start(t, nil)
	const path = "/api/v1/namespaces/default/pods"
	// Bound to a node nobody runs, so nothing finishes the deletion.
	code, out, _ := s.Do(t, http.MethodPost, path, "application/json",
		strings.NewReader(`{"metadata":{"name":"p"},"spec":{"nodeName":"n1","terminationGracePeriodSeconds":30,"containers":[{"name":"c","image":"nginx"}]}}`))
	if code != http.StatusCreated {
		t.Fatal(code, string(out))
	}
	del := func(t *testing.T, body string) fullObject {
		t.Helper()
		code, out, _ := s.Do(t, http.MethodDelete, path+"/p", "application/json", strings.NewReader(body))
		if code != http.StatusOK {
			t.Fatalf("DELETE %s: %d %s", body, code, out)
		}
		code, out, _ = s.Do(t, http.MethodGet, path+"/p", "", nil)
		if code != http.StatusOK {
			t.Fatalf("GET after DELETE %s: %d %s", body, code, out)
		}
		return decode[fullObject](t, out)
	}
	deadline := func(t *testing.T, p fullObject) time.Time {
		t.Helper()
		if p.Metadata.DeletionTimestamp == nil || p.Metadata.DeletionGracePeriodSeconds == nil {
			t.Fatalf("not terminating: %+v", p.Metadata)
		}
		d, err := time.Parse(time.RFC3339, *p.Metadata.DeletionTimestamp)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	p := del(t, `{"gracePeriodSeconds":60}`)
	first := deadline(t, p)
	if *p.Metadata.DeletionGracePeriodSeconds != 60 {
		t.Fatalf("grace %d, want 60", *p.Metadata.DeletionGracePeriodSeconds)
	}
	time.Sleep(1100 * time.Millisecond)
	p = del(t, ``)
	if got := deadline(t, p); !got.Equal(first) || *p.Metadata.DeletionGracePeriodSeconds != 60 {
		t.Errorf("a delete without a grace period changed the pending one: %s grace %d, want %s grace 60",
			got, *p.Metadata.DeletionGracePeriodSeconds, first)
	}
	p = del(t, `{"gracePeriodSeconds":30}`)
	if got, want := deadline(t, p), first.Add(-30*time.Second); !got.Equal(want) || *p.Metadata.DeletionGracePeriodSeconds != 30 {
		t.Errorf("shortened to 30 s: deadline %s grace %d, want %s (30 s after the deletion began) grace 30",
			got, *p.Metadata.DeletionGracePeriodSeconds, want)
	}
	// Shortening to 0 removes it.
	code, out, _ = s.Do(t, http.MethodDelete, path+"/p", "application/json", strings.NewReader(`{"gracePeriodSeconds":0}`))
	if code != http.StatusOK {
		t.Fatal(code, string(out))
	}
	if code, _, _ := s.Do(t, http.MethodGet, path+"/p", "", nil); code != http.StatusNotFound {
		t.Errorf("after a delete with grace 0: GET %d, want 404", code)
	}
}
