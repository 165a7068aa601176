package multiserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"things.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"things","kind":"Thing"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
   "properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","maximum":5}}}}}}}]}}`

// A CRD created through one API server is served by every replica on the
// same etcd; objects written through one are read through the others, and
// deleting the CRD through another replica stops every one serving it.
func TestCRDServedByEveryReplica(t *testing.T) {
	servers := startServers(t, startEtcd(t), 3)
	const things = "/apis/example.com/v1/namespaces/default/things"
	wait := func(what string, cond func() bool) {
		t.Helper()
		testwait.UntilEvery(t, 20*time.Second, 20*time.Millisecond, what, testwait.Bool(cond))
	}
	if code, body, _ := servers[0].Do(t, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"application/json", strings.NewReader(crd)); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	for i, s := range servers {
		wait("replica "+string(rune('0'+i))+" serving things", func() bool {
			code, _, _ := s.Do(t, http.MethodGet, things, "", nil)
			return code == http.StatusOK
		})
	}
	code, body, _ := servers[1].Do(t, http.MethodPost, things, "application/json",
		strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"size":6}}`))
	if code != http.StatusUnprocessableEntity {
		t.Errorf("schema violation through replica 1: %d %s", code, body)
	}
	if code, body, _ := servers[1].Do(t, http.MethodPost, things, "application/json",
		strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"size":3}}`)); code != http.StatusCreated {
		t.Fatalf("create through replica 1: %d %s", code, body)
	}
	for _, s := range []int{0, 2} {
		if code, body, _ := servers[s].Do(t, http.MethodGet, things+"/t", "", nil); code != http.StatusOK || !bytes.Contains(body, []byte(`"size":3`)) {
			t.Errorf("read through replica %d: %d %s", s, code, body)
		}
	}
	if code, body, _ := servers[2].Do(t, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com", "", nil); code != http.StatusOK {
		t.Fatalf("delete CRD through replica 2: %d %s", code, body)
	}
	for i, s := range servers {
		wait("replica "+string(rune('0'+i))+" to stop serving things", func() bool {
			code, _, _ := s.Do(t, http.MethodGet, things, "", nil)
			c2, _, _ := s.Do(t, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com", "", nil)
			return code == http.StatusNotFound && c2 == http.StatusNotFound
		})
	}
}
