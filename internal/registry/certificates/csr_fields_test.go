package certificates_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestCSRManagedFields: as kube-apiserver (the strategy's reset fields), a
// request's creator owns its metadata but neither spec nor status.
func TestCSRManagedFields(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	body := strings.Replace(csrBody("c1", requestPEM(t, "alice", "devs"), "example.com/foo", `["client auth"]`),
		`"name":"c1"`, `"name":"c1","labels":{"a":"b"}`, 1)
	code, out, _ := s.Do(t, http.MethodPost, csrs+"?fieldManager=me", "application/json", strings.NewReader(body))
	var csr certificatesv1.CertificateSigningRequest
	if code != http.StatusCreated || json.Unmarshal(out, &csr) != nil {
		t.Fatalf("create: %d %s", code, out)
	}
	if len(csr.ManagedFields) != 1 || csr.ManagedFields[0].Manager != "me" ||
		string(csr.ManagedFields[0].FieldsV1.Raw) != `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}` {
		t.Errorf("managedFields %+v", csr.ManagedFields)
	}
}
