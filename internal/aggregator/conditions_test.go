package aggregator_test

import (
	"net/http"
	"strings"
	"testing"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestConditions: each failing check gives kube-aggregator's reason and
// message, and an unavailable group-version answers 503.
func TestConditions(t *testing.T) {
	t.Parallel()
	fp := frontProxy(t)
	ts := startServer(t, fp)
	be := startBackend(t, fp.CAFile)
	ip := hostIP(t)
	path := "/apis/" + group + "/" + version + "/flunders"

	createAPIService(t, ts, be.caPEM)
	c := waitCondition(t, ts, apiregv1.ConditionFalse, "ServiceNotFound")
	if want := `service/api in "aggregator" is not present`; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	code, b, _ := ts.Do(t, "GET", path, "", nil)
	if code != http.StatusServiceUnavailable || strings.TrimSpace(string(b)) != "service unavailable" {
		t.Errorf("unavailable: %d %q", code, b)
	}

	setupService(t, ts, ip, 0, false)
	c = waitCondition(t, ts, apiregv1.ConditionFalse, "EndpointsNotFound")
	if want := `cannot find endpointslices for service/api in "aggregator"`; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}

	slices := "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices"
	mustDo(t, ts, "POST", slices, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
		"metadata":{"name":"api-1","labels":{"kubernetes.io/service-name":"api"}},"addressType":"IPv4",
		"endpoints":[{"addresses":["`+ip+`"],"conditions":{"ready":false}}],"ports":[{"name":"https","port":1,"protocol":"TCP"}]}`, http.StatusCreated)
	c = waitCondition(t, ts, apiregv1.ConditionFalse, "MissingEndpoints")
	if want := `endpointslices for service/api in "aggregator" have no addresses with port name "https"`; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}

	// Ready, but nothing listens on the port: the discovery check fails.
	mustDo(t, ts, "DELETE", slices+"/api-1", "", http.StatusOK)
	closed := closedPort(t, ip)
	mustDo(t, ts, "POST", slices, `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
		"metadata":{"name":"api-2","labels":{"kubernetes.io/service-name":"api"}},"addressType":"IPv4",
		"endpoints":[{"addresses":["`+ip+`"],"conditions":{"ready":true}}],"ports":[{"name":"https","port":`+closed+`,"protocol":"TCP"}]}`, http.StatusCreated)
	c = waitCondition(t, ts, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
	url := "https://" + ip + ":" + closed + "/apis/" + group + "/" + version
	if want := "failing or missing response from " + url + `: Get "` + url + `": dial tcp ` + ip + ":" + closed + ": connect: connection refused"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}

	// The service's port moves: ServicePortError.
	code, b, _ = ts.Do(t, "PATCH", "/api/v1/namespaces/"+ns+"/services/api", "application/merge-patch+json",
		strings.NewReader(`{"spec":{"ports":[{"name":"https","port":8443,"targetPort":1}]}}`))
	if code != http.StatusOK {
		t.Fatalf("patch service: %d %s", code, b)
	}
	c = waitCondition(t, ts, apiregv1.ConditionFalse, "ServicePortError")
	if want := `service/api in "aggregator" is not listening on port 443`; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
}

// closedPort returns a port on ip that nothing listens on.
func closedPort(t *testing.T, ip string) string {
	t.Helper()
	be := startBackend(t, frontProxy(t).CAFile)
	port := be.srv.Listener.Addr().String()
	be.srv.Close()
	return port[strings.LastIndexByte(port, ':')+1:]
}
