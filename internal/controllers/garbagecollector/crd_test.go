package garbagecollector_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/garbagecollector"
)

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"gadgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// A CRD created while the collector runs is watched at once, not at the
// next rediscovery period (here an hour, so that only the CRD's events can
// have made the collector watch gadgets): deleting a custom owner collects
// its dependents.
func TestCustomResourceOwnerCreatedAfterStart(t *testing.T) {
	e := newEnv(t)
	defer e.runGCWith(t, garbagecollector.Options{ResyncPeriod: time.Hour})()
	if code, body, _ := e.srv.Do(t, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"application/json", bytes.NewReader([]byte(gadgetCRD))); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	const path = "/apis/example.com/v1/namespaces/default/gadgets"
	var code int
	var body []byte
	eventually(t, 10*time.Second, func() (bool, string) {
		code, body, _ = e.srv.Do(t, http.MethodPost, path, "application/json",
			bytes.NewReader([]byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"owner"}}`)))
		return code == http.StatusCreated, string(body)
	})
	uid := decodeUID(t, body)
	e.createCM(t, "default", "dependent", nil, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Gadget", Name: "owner", UID: uid})
	time.Sleep(200 * time.Millisecond) // the dependent must stay while its owner exists
	e.getCM(t, "default", "dependent")
	if code, body, _ := e.srv.Do(t, http.MethodDelete, path+"/owner", "", nil); code != http.StatusOK {
		t.Fatalf("delete owner: %d %s", code, body)
	}
	e.waitGone(t, "default", "dependent")
}

func decodeUID(t *testing.T, body []byte) types.UID {
	t.Helper()
	i := bytes.Index(body, []byte(`"uid":"`))
	if i < 0 {
		t.Fatalf("no uid in %s", body)
	}
	rest := body[i+7:]
	return types.UID(rest[:bytes.IndexByte(rest, '"')])
}
