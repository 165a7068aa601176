package certificates_test

import (
	"crypto"
	"crypto/elliptic"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest/apitest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	ctbs = "/apis/certificates.k8s.io/v1/clustertrustbundles"
	pcrs = "/apis/certificates.k8s.io/v1/namespaces/default/podcertificaterequests"
)

func ctbInvalid(name, msg string, causes ...string) apitest.Refusal {
	return apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `ClusterTrustBundle.certificates.k8s.io "` + name + `" is invalid: ` + msg, Causes: causes}
}

func ctbBody(name, signer, bundle string) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"` + name + `"},"spec":{"signerName":"` + signer + `","trustBundle":` + quote(bundle) + `}}`
}

// TestClusterTrustBundles checks kube-apiserver v1.37.2's answers, taken
// from it: names carry the signer, bundles are CA certificates, the signer
// is immutable, updates name a resourceVersion.
func TestClusterTrustBundles(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	authority := newCA(t)
	leaf := authority.issue(t, ecKey(t, elliptic.P256()).Public(), time.Now(), time.Now().Add(time.Hour), false)
	var b certificatesv1.ClusterTrustBundle
	apitest.Must(t, s, http.MethodPost, ctbs, ctbBody("example.com:foo:ok", "example.com/foo", authority.pem), 201, &b)
	if b.Generation != 0 || b.Spec.TrustBundle != authority.pem {
		t.Fatalf("created %+v", b)
	}
	const rfc1123 = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	noRV := strings.Replace(ctbBody("example.com:foo:ok", "example.com/foo", authority.pem), `"metadata":{`, `"metadata":{"labels":{"a":"b"},`, 1)
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "colon without signer", Method: "POST", Path: ctbs, List: ctbs, Body: `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"ka:x"},"spec":{}}`,
			Want: ctbInvalid("ka:x", `[metadata.name: Invalid value: "ka:x": ClusterTrustBundle without signer name must not have ":" in its name, spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided]`,
				"metadata.name:FieldValueInvalid", "spec.trustBundle:FieldValueInvalid")},
		{Name: "name without signer prefix", Method: "POST", Path: ctbs, List: ctbs, Body: ctbBody("x", "example.com/foo", authority.pem),
			Want: ctbInvalid("x", `metadata.name: Invalid value: "x": ClusterTrustBundle for signerName example.com/foo must be named with prefix example.com:foo:`, "metadata.name:FieldValueInvalid")},
		{Name: "leaf certificate", Method: "POST", Path: ctbs, List: ctbs, Body: ctbBody("example.com:foo:Bad", "example.com/foo", leaf),
			Want: ctbInvalid("example.com:foo:Bad", `[metadata.name: Invalid value: "example.com:foo:Bad": `+rfc1123+`, spec.trustBundle: Invalid value: "<value omitted>": entry 0 does not have the CA bit set]`,
				"metadata.name:FieldValueInvalid", "spec.trustBundle:FieldValueInvalid")},
		{Name: "other block", Method: "POST", Path: ctbs, List: ctbs, Body: ctbBody("dup", "", authority.pem+authority.pem+"-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n"),
			Want: ctbInvalid("dup", `spec.trustBundle: Invalid value: "<value omitted>": entry 2 has bad block type: FOO`, "spec.trustBundle:FieldValueInvalid")},
		{Name: "duplicate", Method: "POST", Path: ctbs, List: ctbs, Body: ctbBody("dup", "", authority.pem+authority.pem),
			Want: ctbInvalid("dup", `spec.trustBundle: Invalid value: "<value omitted>": duplicate trust anchor (indices [0 1])`, "spec.trustBundle:FieldValueInvalid")},
		{Name: "signer changed", Method: "PUT", Path: ctbs + "/example.com:foo:ok", List: ctbs,
			Body: strings.Replace(ctbBody("example.com:foo:ok", "example.com/bar", authority.pem), `"name":`, `"resourceVersion":"`+b.ResourceVersion+`","name":`, 1),
			Want: ctbInvalid("example.com:foo:ok", `[metadata.name: Invalid value: "example.com:foo:ok": ClusterTrustBundle for signerName example.com/bar must be named with prefix example.com:bar:, spec.signerName: Invalid value: "example.com/bar": field is immutable]`,
				"metadata.name:FieldValueInvalid", "spec.signerName:FieldValueInvalid")},
		{Name: "update without resourceVersion", Method: "PUT", Path: ctbs + "/example.com:foo:ok", List: ctbs, Body: noRV,
			Want: apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid,
				Message: `clustertrustbundles.certificates.k8s.io "example.com:foo:ok" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
				Causes:  []string{"metadata.resourceVersion:FieldValueInvalid"}}},
		{Name: "create by update", Method: "PUT", Path: ctbs + "/other", List: ctbs, Body: ctbBody("other", "", authority.pem),
			Want: apitest.Refusal{Code: 404, Reason: metav1.StatusReasonNotFound, Message: `clustertrustbundles.certificates.k8s.io "other" not found`}},
		{Name: "field selector", Method: "GET", Path: ctbs + "?fieldSelector=spec.trustBundle%3Dx", List: ctbs,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "field label not supported: spec.trustBundle"}},
	})
	apitest.Must(t, s, http.MethodPatch, ctbs+"/example.com:foo:ok", `{"metadata":{"labels":{"a":"b"}}}`, 200, nil)
	var list certificatesv1.ClusterTrustBundleList
	apitest.Must(t, s, http.MethodGet, ctbs+"?fieldSelector=spec.signerName%3Dexample.com/foo", "", 200, &list)
	if len(list.Items) != 1 || list.Items[0].Labels["a"] != "b" {
		t.Errorf("by signer: %+v", list.Items)
	}
}

func pcrInvalid(name, msg string, causes ...string) apitest.Refusal {
	return apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `PodCertificateRequest.certificates.k8s.io "` + name + `" is invalid: ` + msg, Causes: causes}
}

func pcrBody(name string, stub []byte) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"` + name + `"},"spec":{"signerName":"example.com/foo","podName":"pod","podUID":"u1","serviceAccountName":"sa","serviceAccountUID":"s1","nodeName":"n1","nodeUID":"nu","stubPKCS10Request":"` + b64(stub) + `"}}`
}

const rfc1123 = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

// TestPodCertificateRequests checks creation (defaults, validation of the
// stub request), the immutable spec and the status transitions, with
// kube-apiserver v1.37.2's answers, taken from it.
func TestPodCertificateRequests(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	key := ecKey(t, elliptic.P256())
	var pcr certificatesv1.PodCertificateRequest
	apitest.Must(t, s, http.MethodPost, pcrs, strings.Replace(pcrBody("p", requestDER(t, key, "")), `"spec":`, `"status":{"conditions":[{"type":"Issued","status":"True"}]},"spec":`, 1), 201, &pcr)
	if pcr.Spec.MaxExpirationSeconds == nil || *pcr.Spec.MaxExpirationSeconds != 86400 || len(pcr.Status.Conditions) != 0 || pcr.Generation != 0 {
		t.Fatalf("created %+v", pcr)
	}
	badSig := requestDER(t, key, "x")
	badSig[len(badSig)-5] ^= 0xff
	otherStub := requestDER(t, edKey(t), "")
	const lbl = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	cond := func(typ, status string) string {
		return `{"type":"` + typ + `","status":"` + status + `","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}`
	}
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "empty spec", Method: "POST", Path: pcrs, List: pcrs, Body: `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"p1"},"spec":{}}`,
			Want: pcrInvalid("p1", `[spec.signerName: Required value, spec.podName: Invalid value: "": `+rfc1123+`, spec.podUID: Invalid value: "": must not be empty, spec.serviceAccountName: Invalid value: "": `+rfc1123+`, spec.serviceAccountUID: Invalid value: "": must not be empty, spec.nodeName: Invalid value: "": `+rfc1123+`, spec.nodeUID: Invalid value: "": must not be empty, spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set]`,
				"spec.signerName:FieldValueRequired", "spec.podName:FieldValueInvalid", "spec.podUID:FieldValueInvalid", "spec.serviceAccountName:FieldValueInvalid",
				"spec.serviceAccountUID:FieldValueInvalid", "spec.nodeName:FieldValueInvalid", "spec.nodeUID:FieldValueInvalid", "spec:FieldValueInvalid")},
		{Name: "bad fields", Method: "POST", Path: pcrs, List: pcrs,
			Body: `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"p1"},"spec":{"signerName":"example.com/foo","podName":"Bad_Pod","podUID":"u1","serviceAccountName":"sa","serviceAccountUID":"s1","nodeName":"n1","nodeUID":"nu","maxExpirationSeconds":100,"stubPKCS10Request":"aGVsbG8=","unverifiedUserAnnotations":{"a b":"c"}}}`,
			Want: pcrInvalid("p1", `[spec.unverifiedUserAnnotations: Invalid value: "a b": `+lbl+`, spec.podName: Invalid value: "Bad_Pod": `+rfc1123+`, spec.maxExpirationSeconds: Invalid value: 100: must be in the range [3600, 7862400], spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR]`,
				"spec.unverifiedUserAnnotations:FieldValueInvalid", "spec.podName:FieldValueInvalid", "spec.maxExpirationSeconds:FieldValueInvalid", "spec.stubPKCS10Request:FieldValueInvalid")},
		{Name: "kubernetes.io signer bound", Method: "POST", Path: pcrs, List: pcrs,
			Body: strings.Replace(pcrBody("p1", requestDER(t, key, "")), `"signerName":"example.com/foo"`, `"signerName":"kubernetes.io/foo","maxExpirationSeconds":90000`, 1),
			Want: pcrInvalid("p1", `spec.maxExpirationSeconds: Invalid value: 90000: must be in the range [3600, 86400]`, "spec.maxExpirationSeconds:FieldValueInvalid")},
		{Name: "P-224 key", Method: "POST", Path: pcrs, List: pcrs, Body: pcrBody("p1", requestDER(t, ecKey(t, elliptic.P224()), "")),
			Want: pcrInvalid("p1", `spec.stubPKCS10Request: Invalid value: "curve P-224": elliptic public keys must use curve P256, P384, or P521`, "spec.stubPKCS10Request:FieldValueInvalid")},
		{Name: "RSA 2048 key", Method: "POST", Path: pcrs, List: pcrs, Body: pcrBody("p1", requestDER(t, rsaKey(t, 2048), "")),
			Want: pcrInvalid("p1", `spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096`, "spec.stubPKCS10Request:FieldValueInvalid")},
		{Name: "bad signature", Method: "POST", Path: pcrs, List: pcrs, Body: pcrBody("p1", badSig),
			Want: pcrInvalid("p1", `spec.stubPKCS10Request: Invalid value: invalid signature`, "spec.stubPKCS10Request:FieldValueInvalid")},
		{Name: "spec changed", Method: "PUT", Path: pcrs + "/p", List: pcrs,
			Body: strings.Replace(pcrBody("p", otherStub), `"name":"p"`, `"name":"p","resourceVersion":"`+pcr.ResourceVersion+`"`, 1),
			Want: pcrInvalid("p", `spec: Invalid value: {"SignerName":"example.com/foo","PodName":"pod","PodUID":"u1","ServiceAccountName":"sa","ServiceAccountUID":"s1","NodeName":"n1","NodeUID":"nu","MaxExpirationSeconds":86400,"PKIXPublicKey":null,"ProofOfPossession":null,"StubPKCS10Request":"`+b64(otherStub)+`","UnverifiedUserAnnotations":null}: field is immutable`, "spec:FieldValueInvalid")},
		{Name: "update without resourceVersion", Method: "PUT", Path: pcrs + "/p", List: pcrs, Body: pcrBody("p", pcr.Spec.StubPKCS10Request),
			Want: apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid,
				Message: `podcertificaterequests.certificates.k8s.io "p" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
				Causes:  []string{"metadata.resourceVersion:FieldValueInvalid"}}},
		{Name: "unknown condition", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"conditions":[` + cond("Foo", "True") + `]}}`,
			Want: pcrInvalid("p", `status.conditions.[0].type: Unsupported value: "Foo": supported values: "Issued", "Denied", "Failed"`, "status.conditions.[0].type:FieldValueNotSupported")},
		{Name: "two terminal conditions", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"conditions":[` + cond("Denied", "True") + `,` + cond("Failed", "False") + `]}}`,
			Want: pcrInvalid("p", `[status.conditions.[1].type: Invalid value: "Failed": There may be at most one condition with type "Issued", "Denied", or "Failed", status.conditions.[1].status: Unsupported value: "False": supported values: "True"]`,
				"status.conditions.[1].type:FieldValueInvalid", "status.conditions.[1].status:FieldValueNotSupported")},
		{Name: "incomplete condition", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"conditions":[{"type":"Denied","status":"True"}]}}`,
			Want: pcrInvalid("p", `[status.conditions[0].lastTransitionTime: Required value, status.conditions[0].reason: Required value]`,
				"status.conditions[0].lastTransitionTime:FieldValueRequired", "status.conditions[0].reason:FieldValueRequired")},
		{Name: "chain while pending", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"certificateChain":"x"}}`,
			Want: pcrInvalid("p", `status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`, "status:FieldValueInvalid")},
		{Name: "denied with chain", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"conditions":[` + cond("Denied", "True") + `],"certificateChain":"x"}}`,
			Want: pcrInvalid("p", `status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest`, "status:FieldValueInvalid")},
		{Name: "issued without chain", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: `{"status":{"conditions":[` + cond("Issued", "True") + `]}}`,
			Want: pcrInvalid("p", `status.certificateChain: Invalid value: "": issued certificate chain must contain at least one certificate`, "status.certificateChain:FieldValueInvalid")},
		{Name: "field selector namespace", Method: "GET", Path: pcrs + "?fieldSelector=metadata.namespace%3Ddefault", List: pcrs,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "field label not supported: metadata.namespace"}},
	})
	checkIssuance(t, s, key)
}

// checkIssuance issues a certificate for the stub key of request p, with
// times consistent with it, then finds the status frozen.
func checkIssuance(t *testing.T, s *testserver.Server, key crypto.Signer) {
	t.Helper()
	authority := newCA(t)
	nb := time.Now().Add(-time.Minute).Truncate(time.Second)
	na := nb.Add(2 * time.Hour)
	refresh := nb.Add(time.Hour)
	other := authority.issue(t, ecKey(t, elliptic.P256()).Public(), nb, na, false)
	leaf := authority.issue(t, key.Public(), nb, na, false)
	times := `,"notBefore":"` + nb.UTC().Format(time.RFC3339) + `","notAfter":"` + na.UTC().Format(time.RFC3339) + `","beginRefreshAt":"` + refresh.UTC().Format(time.RFC3339) + `"`
	issued := `{"type":"Issued","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}`
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "other key", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs,
			Body: `{"status":{"conditions":[` + issued + `],"certificateChain":` + quote(other) + times + `}}`,
			Want: pcrInvalid("p", `status.certificateChain: Invalid value: `+quote(other)+`: leaf certificate was not issued to the requested public key`, "status.certificateChain:FieldValueInvalid")},
		{Name: "no times", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs,
			Body: `{"status":{"conditions":[` + issued + `],"certificateChain":` + quote(leaf) + `}}`,
			Want: pcrInvalid("p", `[status.notBefore: Required value: must be present and consistent with the issued certificate, status.notAfter: Required value: must be present and consistent with the issued certificate, status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]]`,
				"status.notBefore:FieldValueRequired", "status.notAfter:FieldValueRequired", "status.beginRefreshAt:FieldValueRequired")},
	})
	var pcr certificatesv1.PodCertificateRequest
	apitest.Must(t, s, http.MethodPatch, pcrs+"/p/status", `{"status":{"conditions":[`+issued+`],"certificateChain":`+quote(leaf+authority.pem)+times+`}}`, 200, &pcr)
	if pcr.Status.CertificateChain != leaf+authority.pem || !pcr.Status.NotBefore.Time.Equal(nb) {
		t.Fatalf("issued: %+v", pcr.Status)
	}
	apitest.RunRefusals(t, s, []apitest.Case{{Name: "after issuance", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs,
		Body: `{"status":{"conditions":[{"type":"Failed","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`,
		Want: pcrInvalid("p", `status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`, "status:FieldValueInvalid")}})
	var list certificatesv1.PodCertificateRequestList
	for sel, n := range map[string]int{"spec.nodeName%3Dn1": 1, "spec.podName%3Dother": 0, "spec.signerName%3Dexample.com/foo": 1} {
		apitest.Must(t, s, http.MethodGet, pcrs+"?fieldSelector="+sel, "", 200, &list)
		if len(list.Items) != n {
			t.Errorf("%s: %d requests, want %d", sel, len(list.Items), n)
		}
	}
}
