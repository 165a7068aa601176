package certificates_test

import (
	"encoding/base64"
	"net/http"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"

func csrBody(name, request, signer, usages string) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"` + name + `"},"spec":{"request":"` +
		request + `","signerName":"` + signer + `","usages":` + usages + `}}`
}

// TestCSRRequester checks what the recorded cases (testdata) leave out
// because each server has its own admin: the requester fields are those of
// whoever creates the request, whatever the body says, and the extra of
// the body is dropped.
func TestCSRRequester(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	var csr certificatesv1.CertificateSigningRequest
	s.Must(t, http.MethodPost, csrs, `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"c1"},"spec":{"request":"`+
		requestPEM(t, "alice", "devs")+`","signerName":"example.com/foo","usages":["client auth"],"username":"evil","uid":"e","groups":["g"],"extra":{"k":["v"]}}}`, 201, &csr)
	if csr.Spec.Username != "setpoint-admin" || csr.Spec.UID != "setpoint-admin" ||
		!slices.Equal(csr.Spec.Groups, []string{"system:masters", "system:authenticated"}) || csr.Spec.Extra != nil {
		t.Errorf("requester %q uid %q groups %v extra %v, want the admin's", csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra)
	}
}

// TestCSRConditionTimes checks what the recorded cases (testdata) leave
// out because the times are the server's: approval and status writes stamp
// the conditions they add, and keep the times of those they keep.
func TestCSRConditionTimes(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	s.Must(t, http.MethodPost, csrs, csrBody("c1", requestPEM(t, "alice", "devs"), "example.com/foo", `["client auth"]`), 201, nil)
	var csr certificatesv1.CertificateSigningRequest
	s.Must(t, http.MethodPatch, csrs+"/c1/approval", `{"status":{"conditions":[{"type":"Approved","status":"True","reason":"ok"}]}}`, 200, &csr)
	c := csr.Status.Conditions
	if len(c) != 1 || c[0].LastUpdateTime.IsZero() || c[0].LastTransitionTime.IsZero() {
		t.Fatalf("approved: %+v", csr.Status)
	}
	approvedAt := c[0].LastTransitionTime
	cert := base64.StdEncoding.EncodeToString([]byte(newCA(t).pem))
	s.Must(t, http.MethodPatch, csrs+"/c1/status",
		`{"status":{"certificate":"`+cert+`","conditions":[{"type":"Approved","status":"True","reason":"changed"},{"type":"Failed","status":"True"}]}}`, 200, &csr)
	c = csr.Status.Conditions
	if len(c) != 2 || !c[0].LastTransitionTime.Equal(&approvedAt) || c[1].LastUpdateTime.IsZero() || c[1].LastTransitionTime.IsZero() {
		t.Fatalf("issued: %+v", csr.Status)
	}
}
