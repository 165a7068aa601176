package certificates

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest"
)

// TestCSRToleratesStoredProblems: an update keeps working on a request
// stored with what kube-apiserver now refuses on create (the legacy
// signer, unknown or duplicate usages, Approved and Denied together, a
// malformed certificate), as long as the update does not touch it.
func TestCSRToleratesStoredProblems(t *testing.T) {
	r := registrytest.Find(t, Resources(), "certificatesigningrequests")
	old := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", ResourceVersion: "3"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: legacySigner, Request: []byte("not a request"),
			Usages: []certificatesv1.KeyUsage{"bogus", "client auth", "client auth"}},
		Status: certificatesv1.CertificateSigningRequestStatus{
			Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved", Status: "True"}, {Type: "Denied", Status: "True"}},
			Certificate: []byte("garbage"),
		},
	}
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	// Only the request, which a stored object cannot fix, is still checked.
	registrytest.ExpectErrors(t, registrytest.Update(r, upd, old), "spec.request:FieldValueInvalid")
	created := old.DeepCopy()
	created.ResourceVersion = ""
	registrytest.ExpectErrors(t, registrytest.Create(r, created), "spec.request:FieldValueInvalid",
		"spec.signerName:FieldValueInvalid", "spec.usages[0]:FieldValueNotSupported", "spec.usages[2]:FieldValueDuplicate")
	registrytest.ExpectFields(t, r, old, fields.Set{"metadata.name": "legacy", "spec.signerName": legacySigner})
}
