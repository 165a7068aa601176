package certificates_test

import (
	"crypto/elliptic"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest/apitest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"

func csrInvalid(name, msg string, causes ...string) apitest.Refusal {
	return apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `CertificateSigningRequest.certificates.k8s.io "` + name + `" is invalid: ` + msg, Causes: causes}
}

func csrBody(name, request, signer, usages string) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"` + name + `"},"spec":{"request":"` +
		request + `","signerName":"` + signer + `","usages":` + usages + `}}`
}

// TestCSRRefusals sends kube-apiserver v1.37.2's invalid requests and
// checks its answers, taken from it.
func TestCSRRefusals(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ok := requestPEM(t, "alice", "devs")
	badSig := requestDER(t, ecKey(t, elliptic.P256()), "x")
	badSig[len(badSig)-5] ^= 0xff
	badSigPEM := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: badSig}))
	masters := requestPEM(t, "mallory", "system:masters")
	const rfc1123Label = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	const rfc1123Subdomain = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "empty spec", Method: "POST", Path: csrs, List: csrs,
			Body: `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"c0"},"spec":{}}`,
			Want: csrInvalid("c0", `[spec.request: Invalid value: null: PEM block type must be CERTIFICATE REQUEST, spec.usages: Required value, spec.signerName: Required value]`,
				"spec.request:FieldValueInvalid", "spec.usages:FieldValueRequired", "spec.signerName:FieldValueRequired")},
		{Name: "bad fields", Method: "POST", Path: csrs, List: csrs,
			Body: `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"c0"},"spec":{"request":"aGVsbG8=","signerName":"foo","usages":["bad usage","client auth","client auth"],"expirationSeconds":100}}`,
			Want: csrInvalid("c0", `[spec.request: Invalid value: "aGVsbG8=": PEM block type must be CERTIFICATE REQUEST, spec.usages[0]: Unsupported value: "bad usage": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping", spec.usages[2]: Duplicate value: "client auth", spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 600 seconds (10 minutes)]`,
				"spec.request:FieldValueInvalid", "spec.usages[0]:FieldValueNotSupported", "spec.usages[2]:FieldValueDuplicate",
				"spec.signerName:FieldValueInvalid", "spec.expirationSeconds:FieldValueInvalid")},
		{Name: "bad signature, legacy signer", Method: "POST", Path: csrs, List: csrs, Body: csrBody("c0", badSigPEM, "kubernetes.io/legacy-unknown", `["client auth"]`),
			Want: csrInvalid("c0", `[spec.request: Invalid value: "`+badSigPEM+`": x509: ECDSA verification failure, spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version]`,
				"spec.request:FieldValueInvalid", "spec.signerName:FieldValueInvalid")},
		{Name: "signer with two slashes", Method: "POST", Path: csrs, List: csrs, Body: csrBody("c0", ok, "Foo_bar/a/b", `["client auth"]`),
			Want: csrInvalid("c0", `spec.signerName: Invalid value: "Foo_bar/a/b": must be a fully qualified domain and path of the form 'example.com/signer-name'`, "spec.signerName:FieldValueInvalid")},
		{Name: "signer labels", Method: "POST", Path: csrs, List: csrs, Body: csrBody("c0", ok, "Foo_bar/A_b", `["client auth"]`),
			Want: csrInvalid("c0", `[spec.signerName: Invalid value: "Foo_bar": validating label "Foo_bar": `+rfc1123Label+`, spec.signerName: Invalid value: "Foo_bar": should be a domain with at least two segments separated by dots, spec.signerName: Invalid value: "A_b": validating label "A_b": `+rfc1123Subdomain+`]`,
				"spec.signerName:FieldValueInvalid", "spec.signerName:FieldValueInvalid", "spec.signerName:FieldValueInvalid")},
		{Name: "system:masters client certificate", Method: "POST", Path: csrs, List: csrs,
			Body: csrBody("c0", masters, "kubernetes.io/kube-apiserver-client", `["client auth"]`),
			Want: apitest.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden,
				Message: `certificatesigningrequests.certificates.k8s.io "c0" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`}},
		{Name: "system:masters but invalid", Method: "POST", Path: csrs, List: csrs,
			Body: csrBody("c0", masters, "kubernetes.io/kube-apiserver-client", `[]`),
			Want: csrInvalid("c0", "spec.usages: Required value", "spec.usages:FieldValueRequired")},
		{Name: "field selector", Method: "GET", Path: csrs + "?fieldSelector=spec.username%3Dx", List: csrs,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "field label not supported: spec.username"}},
		{Name: "field selector namespace", Method: "GET", Path: csrs + "?fieldSelector=metadata.namespace%3Dx", List: csrs,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "field label not supported: metadata.namespace"}},
	})
}

// TestCSRLifecycle: the requester is whoever creates the request; spec
// and status do not change through the main resource; approval goes
// through approval, the certificate through status; both stamp the
// conditions with the time.
func TestCSRLifecycle(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	var csr certificatesv1.CertificateSigningRequest
	apitest.Must(t, s, http.MethodPost, csrs, `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"c1"},"spec":{"request":"`+
		requestPEM(t, "alice", "devs")+`","signerName":"example.com/foo","usages":["client auth"],"username":"evil","uid":"e","groups":["g"],"extra":{"k":["v"]},"expirationSeconds":3600},"status":{"conditions":[{"type":"Approved","status":"True"}],"certificate":"aGVsbG8="}}`, 201, &csr)
	if csr.Spec.Username != "setpoint-admin" || csr.Spec.UID != "setpoint-admin" || !slices.Equal(csr.Spec.Groups, []string{"system:masters", "system:authenticated"}) ||
		csr.Spec.Extra != nil || len(csr.Status.Conditions) != 0 || csr.Status.Certificate != nil || csr.Generation != 0 {
		t.Fatalf("created %+v", csr)
	}
	apitest.Must(t, s, http.MethodPatch, csrs+"/c1", `{"metadata":{"labels":{"a":"b"}},"spec":{"signerName":"example.com/bar"},"status":{"certificate":"aGVsbG8="}}`, 200, &csr)
	if csr.Labels["a"] != "b" || csr.Spec.SignerName != "example.com/foo" || csr.Status.Certificate != nil {
		t.Fatalf("main update changed spec or status: %+v", csr)
	}
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "status adds Approved", Method: "PATCH", Path: csrs + "/c1/status", List: csrs,
			Body: `{"status":{"conditions":[{"type":"Approved","status":"True","reason":"x"}]}}`,
			Want: csrInvalid("c1", `status.conditions: Forbidden: updates may not add a condition of type "Approved"`, "status.conditions:FieldValueForbidden")},
		{Name: "status sets garbage", Method: "PATCH", Path: csrs + "/c1/status", List: csrs, Body: `{"status":{"certificate":"aGVsbG8="}}`,
			Want: csrInvalid("c1", `status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`, "status.certificate:FieldValueInvalid")},
		{Name: "approved and denied", Method: "PATCH", Path: csrs + "/c1/approval", List: csrs,
			Body: `{"status":{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}}`,
			Want: csrInvalid("c1", "status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`",
				"status.conditions:FieldValueInvalid")},
		{Name: "bad condition statuses", Method: "PATCH", Path: csrs + "/c1/approval", List: csrs,
			Body: `{"status":{"conditions":[{"type":"Approved","status":"False"},{"type":"Foo","status":"Maybe"},{"type":"","status":""}]}}`,
			Want: csrInvalid("c1", `[status.conditions[0].status: Unsupported value: "False": supported values: "True", status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown", status.conditions[2].type: Required value, status.conditions[2].status: Required value]`,
				"status.conditions[0].status:FieldValueNotSupported", "status.conditions[1].status:FieldValueNotSupported",
				"status.conditions[2].type:FieldValueRequired", "status.conditions[2].status:FieldValueRequired")},
	})
	apitest.Must(t, s, http.MethodPatch, csrs+"/c1/approval", `{"status":{"conditions":[{"type":"Approved","status":"True","reason":"ok"}],"certificate":"aGVsbG8="}}`, 200, &csr)
	c := csr.Status.Conditions
	if len(c) != 1 || c[0].Type != certificatesv1.CertificateApproved || c[0].LastUpdateTime.IsZero() || c[0].LastTransitionTime.IsZero() || csr.Status.Certificate != nil {
		t.Fatalf("approved: %+v", csr.Status)
	}
	approvedAt := c[0].LastTransitionTime
	authority := newCA(t)
	cert := base64.StdEncoding.EncodeToString([]byte(authority.pem))
	apitest.Must(t, s, http.MethodPatch, csrs+"/c1/status",
		`{"status":{"certificate":"`+cert+`","conditions":[{"type":"Approved","status":"True","reason":"changed"},{"type":"Failed","status":"True"}]}}`, 200, &csr)
	c = csr.Status.Conditions
	if len(c) != 2 || c[0].Reason != "ok" || !c[0].LastTransitionTime.Equal(&approvedAt) || c[1].LastUpdateTime.IsZero() || string(csr.Status.Certificate) != authority.pem {
		t.Fatalf("issued: %+v", csr.Status)
	}
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "remove approval", Method: "PATCH", Path: csrs + "/c1/approval", List: csrs, Body: `{"status":{"conditions":[]}}`,
			Want: csrInvalid("c1", `[status.conditions: Forbidden: updates may not remove a condition of type "Approved", status.conditions: Forbidden: updates may not remove a condition of type "Failed"]`,
				"status.conditions:FieldValueForbidden", "status.conditions:FieldValueForbidden")},
		{Name: "replace certificate", Method: "PATCH", Path: csrs + "/c1/status", List: csrs,
			Body: `{"status":{"certificate":"` + base64.StdEncoding.EncodeToString([]byte(newCA(t).pem)) + `"}}`,
			Want: csrInvalid("c1", `status.certificate: Forbidden: updates may not modify existing certificate content`, "status.certificate:FieldValueForbidden")},
	})
	var list certificatesv1.CertificateSigningRequestList
	apitest.Must(t, s, http.MethodGet, csrs+"?fieldSelector=spec.signerName%3Dexample.com/foo", "", 200, &list)
	if len(list.Items) != 1 {
		t.Errorf("signer example.com/foo: %d requests", len(list.Items))
	}
	apitest.Must(t, s, http.MethodGet, csrs+"?fieldSelector=spec.signerName%3Dexample.com/bar", "", 200, &list)
	if len(list.Items) != 0 {
		t.Errorf("signer example.com/bar: %d requests", len(list.Items))
	}
}
