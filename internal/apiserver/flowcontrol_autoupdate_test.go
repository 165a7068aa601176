package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestFlowControlConfigAutoUpdate: at start the server brings the default
// configuration objects back to kube-apiserver's specs where their
// apf.kubernetes.io/autoupdate-spec annotation says "true", leaves those
// that say "false", and deletes objects with the annotation "true" that
// are no longer part of the configuration.
func TestFlowControlConfigAutoUpdate(t *testing.T) {
	dir := t.TempDir()
	s := testserver.Start(t, testserver.Options{Storage: controlplane.StorageBolt, DataDir: dir})
	admin := identity{s, s.Token}
	edit := func(name, annotation string, queues int) {
		t.Helper()
		_, body, _ := admin.do(t, http.MethodGet, fcPath+"/prioritylevelconfigurations/"+name, "")
		var pl map[string]any
		if err := json.Unmarshal([]byte(body), &pl); err != nil {
			t.Fatal(err)
		}
		pl["metadata"].(map[string]any)["annotations"] = map[string]any{"apf.kubernetes.io/autoupdate-spec": annotation}
		pl["spec"].(map[string]any)["limited"].(map[string]any)["limitResponse"].(map[string]any)["queuing"].(map[string]any)["queues"] = queues
		if code, body, _ := admin.do(t, http.MethodPut, fcPath+"/prioritylevelconfigurations/"+name, string(mustJSON(t, pl))); code != http.StatusOK {
			t.Fatalf("update %s: %d %s", name, code, body)
		}
	}
	edit("workload-low", "true", 7)
	edit("global-default", "false", 9)
	for name, annotation := range map[string]string{"obsolete": `"true"`, "users-own": `"false"`} {
		fs := `{"metadata":{"name":"` + name + `","annotations":{"apf.kubernetes.io/autoupdate-spec":` + annotation + `}},
			"spec":{"priorityLevelConfiguration":{"name":"global-default"},"rules":[{"subjects":[{"kind":"User","user":{"name":"nobody"}}],
			"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/nothing"]}]}]}}`
		if code, body, _ := admin.do(t, http.MethodPost, fcPath+"/flowschemas", fs); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	s.Stop(t)

	s = testserver.Start(t, testserver.Options{Storage: controlplane.StorageBolt, DataDir: dir})
	admin = identity{s, s.Token}
	queues := func(name string) (string, string) {
		code, body, _ := admin.do(t, http.MethodGet, fcPath+"/prioritylevelconfigurations/"+name+"", "")
		if code != http.StatusOK {
			t.Fatalf("get %s: %d", name, code)
		}
		return between(body, `"queues":`, `,`), body
	}
	if q, body := queues("workload-low"); q != "128" || !strings.Contains(body, `"generation":3`) {
		t.Errorf("workload-low (autoupdate true) not restored as a new generation: queues %s\n%s", q, body)
	}
	if q, _ := queues("global-default"); q != "9" {
		t.Errorf("global-default (autoupdate false) changed: queues %s", q)
	}
	if code, _, _ := admin.do(t, http.MethodGet, fcPath+"/flowschemas/obsolete", ""); code != http.StatusNotFound {
		t.Errorf("obsolete FlowSchema: %d, want 404", code)
	}
	if code, _, _ := admin.do(t, http.MethodGet, fcPath+"/flowschemas/users-own", ""); code != http.StatusOK {
		t.Errorf("the user's FlowSchema: %d, want 200", code)
	}
}
