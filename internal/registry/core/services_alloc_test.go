package core_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const svcs = "/api/v1/namespaces/default/services"

// do sends a JSON (or merge-patch, for PATCH) request and fails unless the
// answer has status want; it returns the decoded service.
func do(t *testing.T, s *testserver.Server, method, path, body string, want int) corev1.Service {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	var code int
	var out []byte
	if r != nil {
		code, out, _ = s.Do(t, method, path, ctype, r)
	} else {
		code, out, _ = s.Do(t, method, path, "", nil)
	}
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
	}
	var svc corev1.Service
	_ = json.Unmarshal(out, &svc)
	return svc
}

func nodePort(svc corev1.Service) int32 { return svc.Spec.Ports[0].NodePort }

// TestServiceAllocationFollowsType checks that cluster IPs and node ports
// follow a service's type on update, as on create: a ClusterIP service
// changed to NodePort gets a node port, and changed back gives it up; an
// ExternalName service changed to ClusterIP gets a cluster IP, and a
// ClusterIP service changed to ExternalName gives its address back. A
// refused update keeps nothing it claimed.
func TestServiceAllocationFollowsType(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	a := do(t, s, http.MethodPost, svcs, `{"metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}}`, 201)
	if nodePort(a) != 0 || a.Spec.ClusterIP == "" {
		t.Fatalf("ClusterIP service: nodePort %d, clusterIP %q", nodePort(a), a.Spec.ClusterIP)
	}
	a = do(t, s, http.MethodPatch, svcs+"/a", `{"spec":{"type":"NodePort"}}`, 200)
	port := nodePort(a)
	if port < 30000 || port > 32767 {
		t.Fatalf("ClusterIP changed to NodePort: nodePort %d, want one in 30000-32767", port)
	}
	claim := fmt.Sprintf(`{"metadata":{"name":"b"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":%d}]}}`, port)
	do(t, s, http.MethodPost, svcs, claim, 422) // held by a
	a = do(t, s, http.MethodPatch, svcs+"/a", `{"spec":{"type":"ClusterIP"}}`, 200)
	if nodePort(a) != 0 {
		t.Fatalf("NodePort changed back to ClusterIP keeps nodePort %d", nodePort(a))
	}
	do(t, s, http.MethodPost, svcs, claim, 201) // released by a

	e := do(t, s, http.MethodPost, svcs, `{"metadata":{"name":"e"},"spec":{"type":"ExternalName","externalName":"db.example.com"}}`, 201)
	if e.Spec.ClusterIP != "" {
		t.Fatalf("ExternalName service got clusterIP %q", e.Spec.ClusterIP)
	}
	e = do(t, s, http.MethodPatch, svcs+"/e", `{"spec":{"type":"ClusterIP","externalName":null,"ports":[{"port":5432}]}}`, 200)
	ip := e.Spec.ClusterIP
	if ip == "" {
		t.Fatal("ExternalName changed to ClusterIP got no cluster IP")
	}
	takeIP := fmt.Sprintf(`{"metadata":{"name":"f"},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, ip)
	do(t, s, http.MethodPost, svcs, takeIP, 422) // held by e
	e = do(t, s, http.MethodPatch, svcs+"/e", `{"spec":{"type":"ExternalName","externalName":"db.example.com","clusterIP":null,"clusterIPs":null}}`, 200)
	if e.Spec.ClusterIP != "" {
		t.Fatalf("ClusterIP changed to ExternalName keeps clusterIP %q", e.Spec.ClusterIP)
	}
	do(t, s, http.MethodPost, svcs, takeIP, 201) // released by e

	// A refused update (a second port with the same name) claims nothing:
	// the node port it would have taken stays free, and the service is as
	// it was.
	before := do(t, s, http.MethodGet, svcs+"/a", "", 200)
	bad := `{"spec":{"type":"NodePort","ports":[{"name":"x","port":80,"nodePort":31999},{"name":"x","port":81}]}}`
	do(t, s, http.MethodPatch, svcs+"/a", bad, 422)
	after := do(t, s, http.MethodGet, svcs+"/a", "", 200)
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("a refused update changed the service: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
	}
	do(t, s, http.MethodPost, svcs, `{"metadata":{"name":"g"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":31999}]}}`, 201)
}

// TestServiceAllocationRefusals: as kube-apiserver, a requested cluster
// IP that is not an IP is refused before allocation, and refusals name the
// service (not its namespace); the store is unchanged.
func TestServiceAllocationRefusals(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for ip, want := range map[string]string{
		"not-an-ip":     `Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		"192.168.77.77": `Service \"web\" is invalid: spec.clusterIPs: Invalid value: [\"192.168.77.77\"]: failed to allocate IP 192.168.77.77: the provided network does not match the current range`,
	} {
		body := fmt.Sprintf(`{"metadata":{"name":"web"},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, ip)
		code, out, _ := s.Do(t, http.MethodPost, svcs, "application/json", strings.NewReader(body))
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(out), want) {
			t.Errorf("cluster IP %q: %d %s", ip, code, out)
		}
		if code, _, _ := s.Do(t, http.MethodGet, svcs+"/web", "", nil); code != http.StatusNotFound {
			t.Errorf("cluster IP %q: the service was stored (%d)", ip, code)
		}
	}
	a := do(t, s, http.MethodPost, svcs, `{"metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}}`, http.StatusCreated)
	body := fmt.Sprintf(`{"metadata":{"name":"b"},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, a.Spec.ClusterIP)
	code, out, _ := s.Do(t, http.MethodPost, svcs, "application/json", strings.NewReader(body))
	if want := fmt.Sprintf(`spec.clusterIPs: Invalid value: [\"%s\"]: failed to allocate IP %s: provided IP is already allocated`, a.Spec.ClusterIP, a.Spec.ClusterIP); code != http.StatusUnprocessableEntity || !strings.Contains(string(out), want) {
		t.Errorf("a taken cluster IP: %d %s", code, out)
	}
}

// TestServiceAddressingNotOwned: as kube-apiserver, which fills them when it
// allocates (after the field manager), the writer of a service does not own
// its IP families, policy or cluster IPs; the service has them all the same.
func TestServiceAddressingNotOwned(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	for _, body := range []string{
		`{"metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}}`,
		`{"metadata":{"name":"headless"},"spec":{"clusterIP":"None","ports":[{"port":80}]}}`,
	} {
		svc := do(t, s, http.MethodPost, svcs+"?fieldManager=me", body, http.StatusCreated)
		owned := string(svc.ManagedFields[0].FieldsV1.Raw)
		if strings.Contains(owned, "f:ipFamilies") || strings.Contains(owned, "f:ipFamilyPolicy") || strings.Contains(owned, "f:clusterIPs") {
			t.Errorf("%s: the writer owns %s", svc.Name, owned)
		}
		if len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilyPolicy == nil || len(svc.Spec.ClusterIPs) != 1 {
			t.Errorf("%s: addressing %+v", svc.Name, svc.Spec)
		}
	}
}
