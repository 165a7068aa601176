package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func mustDo(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int) []byte {
	t.Helper()
	code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
	}
	return out
}

// TestNamespaceFinalize: a deleted namespace stays Terminating while
// spec.finalizers holds it, and the finalize subresource (what the namespace
// controller calls) releases it.
func TestNamespaceFinalize(t *testing.T) {
	s, _ := start(t, nil)
	const js = "application/json"
	mustDo(t, s, "POST", "/api/v1/namespaces", js, `{"metadata":{"name":"fin"}}`, 201)
	mustDo(t, s, "DELETE", "/api/v1/namespaces/fin", "", "", 200)
	ns := decode[fullObject](t, mustDo(t, s, "GET", "/api/v1/namespaces/fin", "", "", 200))
	if ns.Status.Phase != "Terminating" || ns.Metadata.DeletionTimestamp == nil {
		t.Fatalf("after delete: phase %q deletionTimestamp %v", ns.Status.Phase, ns.Metadata.DeletionTimestamp)
	}
	mustDo(t, s, "PUT", "/api/v1/namespaces/fin/finalize", js,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fin"},"spec":{"finalizers":["not a/valid/name!"]}}`, 422)
	mustDo(t, s, "PUT", "/api/v1/namespaces/fin/finalize", js,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fin"},"spec":{"finalizers":[]}}`, 200)
	mustDo(t, s, "GET", "/api/v1/namespaces/fin", "", "", 404)
}

// TestServiceAllocation: services get distinct cluster IPs in the service
// range and node ports in 30000-32767; a taken IP is refused with 422; a
// deleted service gives its IP back.
func TestServiceAllocation(t *testing.T) {
	s, _ := start(t, nil)
	const svcs, js = "/api/v1/namespaces/default/services", "application/json"
	svc := func(name, typ, ip string) string {
		extra := ""
		if ip != "" {
			extra = `,"clusterIP":"` + ip + `"`
		}
		return `{"metadata":{"name":"` + name + `"},"spec":{"type":"` + typ + `","ports":[{"port":80}],"selector":{"app":"x"}` + extra + `}}`
	}
	type service struct {
		Spec struct {
			ClusterIP string `json:"clusterIP"`
			Ports     []struct {
				NodePort int `json:"nodePort"`
			} `json:"ports"`
		} `json:"spec"`
	}
	cidr := netip.MustParsePrefix(core.ServiceCIDR)
	a := decode[service](t, mustDo(t, s, "POST", svcs, js, svc("a", "ClusterIP", ""), 201))
	b := decode[service](t, mustDo(t, s, "POST", svcs, js, svc("b", "NodePort", ""), 201))
	for _, ip := range []string{a.Spec.ClusterIP, b.Spec.ClusterIP} {
		if addr, err := netip.ParseAddr(ip); err != nil || !cidr.Contains(addr) || ip == "10.96.0.1" {
			t.Errorf("cluster IP %q not a free address of %s", ip, cidr)
		}
	}
	if a.Spec.ClusterIP == b.Spec.ClusterIP {
		t.Errorf("two services share %s", a.Spec.ClusterIP)
	}
	if p := b.Spec.Ports[0].NodePort; p < 30000 || p > 32767 {
		t.Errorf("node port %d outside 30000-32767", p)
	}
	mustDo(t, s, "POST", svcs, js, svc("c", "ClusterIP", a.Spec.ClusterIP), 422)
	mustDo(t, s, "POST", svcs, js, svc("d", "ClusterIP", "10.96.0.1"), 422) // the kubernetes service's
	mustDo(t, s, "DELETE", svcs+"/a", "", "", 200)
	mustDo(t, s, "POST", svcs, js, svc("e", "ClusterIP", a.Spec.ClusterIP), 201)
}

// TestResponseViews: YAML, protobuf and PartialObjectMetadata answers.
func TestResponseViews(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "view", map[string]string{"k": "v"})
	get := func(path, accept string) (string, []byte) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("Accept", accept)
		resp, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s (%s): %d %s", path, accept, resp.StatusCode, buf.Bytes())
		}
		return resp.Header.Get("Content-Type"), buf.Bytes()
	}
	if ct, body := get(cmPath+"/view", "application/yaml"); ct != "application/yaml" || !strings.Contains(string(body), "kind: ConfigMap\n") {
		t.Errorf("yaml: %s\n%s", ct, body)
	}
	if ct, body := get(cmPath+"/view", "application/vnd.kubernetes.protobuf"); ct != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Errorf("protobuf: %s %q", ct, body[:min(len(body), 8)])
	}
	_, body := get(cmPath, "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	pl := decode[struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind     string `json:"kind"`
			Metadata meta   `json:"metadata"`
			Data     any    `json:"data"`
		} `json:"items"`
	}](t, body)
	if pl.Kind != "PartialObjectMetadataList" || len(pl.Items) != 1 || pl.Items[0].Metadata.Name != "view" || pl.Items[0].Data != nil {
		t.Errorf("partial metadata list: %s", body)
	}
}

// TestEventsAreCreatedOnUpdate: PUT of a missing event creates it, as
// Kubernetes allows for events (and not for configmaps).
func TestEventsAreCreatedOnUpdate(t *testing.T) {
	s, _ := start(t, nil)
	ev := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"Test","message":"m","type":"Normal"}`
	mustDo(t, s, "PUT", "/api/v1/namespaces/default/events/e1", "application/json", ev, 201)
	mustDo(t, s, "PUT", cmPath+"/nope", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nope"}}`, 404)
}

// TestCompactionSchedule drives the compaction loop with a fake clock: after
// two intervals the store is compacted to the revision seen at the first, so
// an exact read at an older revision is gone (410) while current reads work.
func TestCompactionSchedule(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	s, kv := start(t, func(c *apiserver.Config) {
		c.Clock = clk
		c.CompactionInterval = time.Minute
	})
	first := createCM(t, s, "c1", nil)
	createCM(t, s, "c2", nil)
	testwait.UntilEvery(t, 30*time.Second, 5*time.Millisecond, "a compaction after stepping the clock", func() error {
		rev, err := kv.CompactedRevision(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rev > first {
			return nil
		}
		clk.Step(time.Minute) // each step is one tick of the loop
		return fmt.Errorf("compacted revision %d, not past %d", rev, first)
	})
	code, body, _ := s.Do(t, http.MethodGet, cmPath+"?resourceVersionMatch=Exact&resourceVersion="+itoa(first), "", nil)
	if st := decode[status](t, body); code != http.StatusGone || st.Reason != "Expired" {
		t.Errorf("exact read below the compacted revision: %d %s", code, body)
	}
	mustDo(t, s, "GET", cmPath+"/c2", "", "", 200)
}
