package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestGenerationOnlyWhereKubernetesKeepsOne: deployments, replicasets and
// pods get metadata.generation 1 and +1 per spec change; the kinds whose
// Kubernetes strategy keeps none (configmaps, secrets, services,
// namespaces, nodes, events, leases) have no generation, before and after
// an update, so `kubectl get -o yaml` and `kubectl diff` show none.
func TestGenerationOnlyWhereKubernetesKeepsOne(t *testing.T) {
	s, _ := start(t, nil)
	create := func(t *testing.T, path, body string) fullObject {
		t.Helper()
		code, out, _ := s.Do(t, http.MethodPost, path, "application/json", strings.NewReader(body))
		if code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, code, out)
		}
		if strings.Contains(string(out), `"generation"`) != (decode[fullObject](t, out).Metadata.Generation != 0) {
			t.Fatalf("inconsistent generation in %s", out)
		}
		return decode[fullObject](t, out)
	}
	none := map[string]string{
		cmPath:                                `{"metadata":{"name":"c"},"data":{"a":"1"}}`,
		"/api/v1/namespaces/default/secrets":  `{"metadata":{"name":"s"},"stringData":{"a":"1"}}`,
		"/api/v1/namespaces/default/services": `{"metadata":{"name":"svc"},"spec":{"ports":[{"port":80}]}}`,
		"/api/v1/namespaces":                  `{"metadata":{"name":"ns1"}}`,
		"/api/v1/nodes":                       `{"metadata":{"name":"n1"}}`,
		"/api/v1/namespaces/default/events":   `{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","type":"Normal"}`,
		"/apis/coordination.k8s.io/v1/namespaces/default/leases": `{"metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`,
	}
	for path, body := range none {
		if o := create(t, path, body); o.Metadata.Generation != 0 {
			t.Errorf("%s: generation %d, want none", path, o.Metadata.Generation)
		}
	}
	code, out, _ := s.Do(t, http.MethodPatch, cmPath+"/c", "application/merge-patch+json", strings.NewReader(`{"data":{"a":"2"}}`))
	if code != http.StatusOK || strings.Contains(string(out), `"generation"`) {
		t.Errorf("configmap after a data change: %d %s, want no generation", code, out)
	}

	if d := create(t, deployPath, deployment("1", "web", "web")); d.Metadata.Generation != 1 {
		t.Errorf("deployment generation %d, want 1", d.Metadata.Generation)
	}
	code, out, _ = s.Do(t, http.MethodPatch, deployPath+"/d", "application/merge-patch+json", strings.NewReader(`{"spec":{"replicas":2}}`))
	if code != http.StatusOK || decode[fullObject](t, out).Metadata.Generation != 2 {
		t.Errorf("deployment after a spec change: %d %s, want generation 2", code, out)
	}
	if p := create(t, "/api/v1/namespaces/default/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`); p.Metadata.Generation != 1 {
		t.Errorf("pod generation %d, want 1", p.Metadata.Generation)
	}
}
