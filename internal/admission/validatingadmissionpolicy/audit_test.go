package validatingadmissionpolicy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestAuditAnnotations: a validation failed with the Audit action is
// recorded in the request's audit event as
// validation.policy.admission.k8s.io/validation_failure, an
// auditAnnotation as <policy>/<key>, and the write is allowed.
func TestAuditAnnotations(t *testing.T) {
	dir := t.TempDir()
	policyFile, logFile := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policyFile, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [configmaps]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testserver.Start(t, testserver.Options{Audit: audit.Options{PolicyFile: policyFile, LogPath: logFile}})
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"vap","labels":{"policies":"on"}}}`)
	policy(t, s, vap("audited", "audited", `"validations":[{"expression":"true"},{"expression":"!('bad' in object.data)","message":"audited"}],
		"auditAnnotations":[{"key":"size","valueExpression":"string(size(object.data))"},{"key":"none","valueExpression":"null"}]`),
		binding("audited-b", "audited", `"validationActions":["Audit"]`))
	want := map[string]string{
		"validation.policy.admission.k8s.io/validation_failure": `[{"message":"audited","policy":"audited","binding":"audited-b","expressionIndex":1,"validationActions":["Audit"]}]`,
		"audited/size": "1",
	}
	n := 0
	eventually(t, func() error {
		n++
		name := fmt.Sprintf("a%d", n)
		mustDo(t, s, "POST", cmPath, configMap(name, `"t":"audited"`, `"bad":"1"`))
		got, err := annotations(logFile, name)
		if err != nil {
			return err
		}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("annotation %s = %q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		if _, ok := got["audited/none"]; ok {
			return fmt.Errorf("null annotation published: %v", got)
		}
		return nil
	})
}

// annotations reads the annotations of the ResponseComplete event of the
// create of configmap name.
func annotations(path, name string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Stage       string                `json:"stage"`
			Verb        string                `json:"verb"`
			ObjectRef   struct{ Name string } `json:"objectRef"`
			Annotations map[string]string     `json:"annotations"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Stage == "ResponseComplete" && e.Verb == "create" && e.ObjectRef.Name == name {
			return e.Annotations, nil
		}
	}
	return nil, fmt.Errorf("no audit event for the create of %s", name)
}
