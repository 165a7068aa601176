package printers

import (
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rows of kube-apiserver v1.37.2's tables for the same objects.

func TestRBACRows(t *testing.T) {
	created := meta("r", time.Hour)
	expectRow(t, "rbac.authorization.k8s.io", "Role", &rbacv1.Role{ObjectMeta: created},
		"r", created.CreationTimestamp.UTC().Format(time.RFC3339))
	expectRow(t, "rbac.authorization.k8s.io", "ClusterRole", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "never"}},
		"never", "0001-01-01T00:00:00Z")
	subjects := []rbacv1.Subject{
		{Kind: "ServiceAccount", Name: "sa"}, {Kind: "ServiceAccount", Name: "sa2", Namespace: "other"},
		{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "devs"}, {Kind: "User", Name: "bob"}, {Kind: "Other", Name: "x"},
	}
	expectRow(t, "rbac.authorization.k8s.io", "RoleBinding", &rbacv1.RoleBinding{
		ObjectMeta: meta("b-ok", 81*time.Second), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: subjects,
	}, "b-ok", "Role/r", "81s", "alice, bob", "devs", "/sa, other/sa2")
	expectRow(t, "rbac.authorization.k8s.io", "ClusterRoleBinding", &rbacv1.ClusterRoleBinding{
		ObjectMeta: meta("cluster-admin", 7*time.Minute), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:masters"}},
	}, "cluster-admin", "ClusterRole/cluster-admin", "7m", "", "system:masters", "")
	cols := ForClock("rbac.authorization.k8s.io", "RoleBinding", clock).Columns()
	if cols[3].Name != "Users" || cols[3].Priority != 1 || cols[5].Name != "ServiceAccounts" || cols[5].Priority != 1 {
		t.Errorf("wide columns: %+v", cols[3:])
	}
}

func TestCertificatesRows(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: meta("c1", 11*time.Minute),
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/foo", Username: "admin", ExpirationSeconds: new(int32(3600))},
	}
	expectRow(t, "certificates.k8s.io", "CertificateSigningRequest", csr, "c1", "11m", "example.com/foo", "admin", "60m", "Pending")
	csr.Spec.ExpirationSeconds, csr.Spec.SignerName = nil, ""
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved"}, {Type: "Failed"}}
	csr.Status.Certificate = []byte("x")
	expectRow(t, "certificates.k8s.io", "CertificateSigningRequest", csr, "c1", "11m", "<none>", "admin", "<none>", "Approved,Failed,Issued")
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Denied"})
	expectRow(t, "certificates.k8s.io", "CertificateSigningRequest", csr, "c1", "11m", "<none>", "admin", "<none>", "Denied,Failed,Issued")

	expectRow(t, "certificates.k8s.io", "ClusterTrustBundle", &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: "example.com:foo:x"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo"},
	}, "example.com:foo:x", "example.com/foo")
	expectRow(t, "certificates.k8s.io", "ClusterTrustBundle", &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, "b", "<none>")

	pcr := &certificatesv1.PodCertificateRequest{
		ObjectMeta: meta("p", time.Minute),
		Spec: certificatesv1.PodCertificateRequestSpec{PodName: "pod", ServiceAccountName: "sa", NodeName: "n1", SignerName: "example.com/foo",
			UnverifiedUserAnnotations: map[string]string{"b.example.com/x": "1", "a.example.com/y": "2"}},
	}
	expectRow(t, "certificates.k8s.io", "PodCertificateRequest", pcr, "p", "pod", "sa", "n1", "example.com/foo", "Pending", "a.example.com/y=2,b.example.com/x=1")
	pcr.Spec.UnverifiedUserAnnotations = nil
	pcr.Status.Conditions = []metav1.Condition{{Type: "Issued", Status: "True"}}
	expectRow(t, "certificates.k8s.io", "PodCertificateRequest", pcr, "p", "pod", "sa", "n1", "example.com/foo", "Issued", "<none>")
}

func TestReviewRows(t *testing.T) {
	expectRow(t, "authorization.k8s.io", "SubjectAccessReview", &authorizationv1.SubjectAccessReview{}, "", "0001-01-01T00:00:00Z")
}
