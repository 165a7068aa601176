package certificates_test

import (
	"crypto"
	"crypto/elliptic"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

const (
	ctbs = "/apis/certificates.k8s.io/v1/clustertrustbundles"
	pcrs = "/apis/certificates.k8s.io/v1/namespaces/default/podcertificaterequests"
)

func ctbBody(name, signer, bundle string) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"` + name + `"},"spec":{"signerName":"` + signer + `","trustBundle":` + quote(bundle) + `}}`
}

func pcrBody(name string, stub []byte) string {
	return `{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":"` + name + `"},"spec":{"signerName":"example.com/foo","podName":"pod","podUID":"u1","serviceAccountName":"sa","serviceAccountUID":"s1","nodeName":"n1","nodeUID":"nu","stubPKCS10Request":"` + b64(stub) + `"}}`
}

// pcrInvalid is kube-apiserver's refusal of a pod certificate request.
func pcrInvalid(name string, errs ...*field.Error) *reftest.Answer {
	return reftest.Refusal(apierrors.NewInvalid(schema.GroupKind{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}, name, errs))
}

// TestPodCertificateIssuance issues a certificate for the stub key of a
// request. The status times must lie within minutes of the server's
// clock, so these cases are built at run time, not recorded; their Want
// are kube-apiserver v1.37.2's answers, and with SETPOINT_REFERENCE_KUBECONFIG
// set the test runs against the reference to check them.
func TestPodCertificateIssuance(t *testing.T) {
	s := reftest.Target(t)
	s.Do(t, http.MethodDelete, pcrs+"/p", "")
	t.Cleanup(func() { s.Do(t, http.MethodDelete, pcrs+"/p", "") })
	key := ecKey(t, elliptic.P256())
	s.Must(t, http.MethodPost, pcrs, pcrBody("p", requestDER(t, key, "")), 201, nil)
	issue(t, s, key)
	var list certificatesv1.PodCertificateRequestList
	for sel, n := range map[string]int{"spec.nodeName%3Dn1": 1, "spec.podName%3Dother": 0, "spec.signerName%3Dexample.com/foo": 1} {
		s.Must(t, http.MethodGet, pcrs+"?fieldSelector="+sel, "", 200, &list)
		if len(list.Items) != n {
			t.Errorf("%s: %d requests, want %d", sel, len(list.Items), n)
		}
	}
}

// issue refuses a chain for another key and one without times, issues a
// certificate for the stub key of request p with consistent times, then
// finds the status frozen.
func issue(t *testing.T, s *reftest.Server, key crypto.Signer) {
	t.Helper()
	authority := newCA(t)
	nb := time.Now().Add(-time.Minute).Truncate(time.Second)
	na := nb.Add(2 * time.Hour)
	refresh := nb.Add(time.Hour)
	other := authority.issue(t, ecKey(t, elliptic.P256()).Public(), nb, na, false)
	leaf := authority.issue(t, key.Public(), nb, na, false)
	times := `,"notBefore":"` + nb.UTC().Format(time.RFC3339) + `","notAfter":"` + na.UTC().Format(time.RFC3339) + `","beginRefreshAt":"` + refresh.UTC().Format(time.RFC3339) + `"`
	issued := `{"type":"Issued","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}`
	status := field.NewPath("status")
	const consistent = "must be present and consistent with the issued certificate"
	s.Replay(t, []reftest.Case{{
		Name:    "other key",
		Request: patch(pcrs+"/p/status", `{"status":{"conditions":[`+issued+`],"certificateChain":`+quote(other)+times+`}}`),
		Want: pcrInvalid("p", field.Invalid(status.Child("certificateChain"), other,
			"leaf certificate was not issued to the requested public key")),
	}, {
		Name:    "no times",
		Request: patch(pcrs+"/p/status", `{"status":{"conditions":[`+issued+`],"certificateChain":`+quote(leaf)+`}}`),
		Want: pcrInvalid("p", field.Required(status.Child("notBefore"), consistent), field.Required(status.Child("notAfter"), consistent),
			field.Required(status.Child("beginRefreshAt"), "must be present and in the range [notbefore+10min, notafter-10min]")),
	}})
	var pcr certificatesv1.PodCertificateRequest
	s.Must(t, http.MethodPatch, pcrs+"/p/status", `{"status":{"conditions":[`+issued+`],"certificateChain":`+quote(leaf+authority.pem)+times+`}}`, 200, &pcr)
	if pcr.Status.CertificateChain != leaf+authority.pem || !pcr.Status.NotBefore.Time.Equal(nb) {
		t.Fatalf("issued: %+v", pcr.Status)
	}
	s.Replay(t, []reftest.Case{{
		Name:    "after issuance",
		Request: patch(pcrs+"/p/status", `{"status":{"conditions":[{"type":"Failed","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`),
		Want:    pcrInvalid("p", field.Invalid(status, field.OmitValueType{}, "immutable after PodCertificateRequest is issued, denied, or failed")),
	}})
}

// patch is a merge patch of path.
func patch(path, body string) reftest.Request {
	return reftest.Request{Method: http.MethodPatch, Path: path, Body: []byte(strings.TrimSpace(body))}
}
