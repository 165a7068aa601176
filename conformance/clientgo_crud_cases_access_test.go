package conformance

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A PEM certificate (the reference cluster's CA, as in its samples).
const crudCertificate = `-----BEGIN CERTIFICATE-----
MIIBaDCCAQ6gAwIBAgIIEwgOS4007AcwCgYIKoZIzj0EAwIwGDEWMBQGA1UEAxMN
cmVmY2x1c3Rlci1jYTAeFw0yNjExMjUyMTIyMTVaFw0zNjExMjUyMjIyMTVaMBgx
FjAUBgNVBAMTDXJlZmNsdXN0ZXItY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AARY4AFhyPGj4U7OhpEQIhe+istV1jVcplWqwiIuJK8ZCbeyHFezJt+WYSwuAZPs
L6ORJ3AEJRHwhvX5HZobADymo0IwQDAOBgNVHQ8BAf8EBAMCAqQwDwYDVR0TAQH/
BAUwAwEB/zAdBgNVHQ4EFgQUV8nN8eH+7IErRjQQkpZp7ZO6L7cwCgYIKoZIzj0E
AwIDSAAwRQIgPK7yhR4h06seahdm7Zc268aFZtsq/3HM74bjakRU3UcCIQCOcmgF
isko2duu4/zwaa4uzsLmZ+PZFRHqWmP9AS+Oqg==
-----END CERTIFICATE-----
`

// crudCSR is a PEM PKCS#10 request for CN=crud-user, O=crud-group.
var crudCSR, crudStubCSR = func() ([]byte, []byte) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "crud-user", Organization: []string{"crud-group"}}}, key)
	if err != nil {
		panic(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), stub
}()

func accessCases() []crudCase {
	rbac := rbacv1.SchemeGroupVersion
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "crud-user"}}
	certs := certificatesv1.SchemeGroupVersion
	fc := flowcontrolv1.SchemeGroupVersion
	// the flow schemas match nothing a cluster sends
	fsRules := []flowcontrolv1.PolicyRulesWithSubjects{{
		Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "cg-crud-nobody"}}},
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"cg-crud.example.com"},
			Resources: []string{"nothings"}, ClusterScope: true}},
	}}
	return []crudCase{
		{
			gvr: rbac.WithResource("roles"), kind: "Role", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &rbacv1.Role{ObjectMeta: crudMeta(n, l, true), Rules: rules}
			},
		},
		{
			gvr: rbac.WithResource("rolebindings"), kind: "RoleBinding", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &rbacv1.RoleBinding{ObjectMeta: crudMeta(n, l, true), Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n}}
			},
		},
		{
			gvr: rbac.WithResource("clusterroles"), kind: "ClusterRole",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &rbacv1.ClusterRole{ObjectMeta: crudMeta(n, l, false), Rules: rules}
			},
		},
		{
			gvr: rbac.WithResource("clusterrolebindings"), kind: "ClusterRoleBinding",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &rbacv1.ClusterRoleBinding{ObjectMeta: crudMeta(n, l, false), Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: n}}
			},
		},
		{
			gvr: certs.WithResource("certificatesigningrequests"), kind: "CertificateSigningRequest",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &certificatesv1.CertificateSigningRequest{ObjectMeta: crudMeta(n, l, false), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: crudCSR, SignerName: "example.com/crud-signer",
					Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
				}}
			},
			setStatus: func(o runtime.Object) {
				csr := o.(*certificatesv1.CertificateSigningRequest)
				csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: "example.com/Checked", Status: corev1.ConditionTrue, Reason: "SetByTest", Message: "set by the test"})
			},
			statusSet: func(o runtime.Object) bool {
				for _, c := range o.(*certificatesv1.CertificateSigningRequest).Status.Conditions {
					if c.Reason == "SetByTest" {
						return true
					}
				}
				return false
			},
			statusKeepsLabels: true,
			subresources:      []string{"approval"},
		},
		{
			gvr: certs.WithResource("clustertrustbundles"), kind: "ClusterTrustBundle",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &certificatesv1.ClusterTrustBundle{ObjectMeta: crudMeta(n, l, false),
					Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: crudCertificate}}
			},
		},
		{
			gvr: certs.WithResource("podcertificaterequests"), kind: "PodCertificateRequest", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &certificatesv1.PodCertificateRequest{ObjectMeta: crudMeta(n, l, true), Spec: certificatesv1.PodCertificateRequestSpec{
					SignerName: "example.com/crud-signer", PodName: "pod-1", PodUID: "pod-uid-1",
					ServiceAccountName: "default", ServiceAccountUID: "sa-uid-1", NodeName: "node-1", NodeUID: "node-uid-1",
					StubPKCS10Request: crudStubCSR,
				}}
			},
			setStatus: func(o runtime.Object) {
				c := setByTest()
				c.Type = certificatesv1.PodCertificateRequestConditionTypeDenied
				o.(*certificatesv1.PodCertificateRequest).Status.Conditions = []metav1.Condition{c}
			},
			statusSet: func(o runtime.Object) bool {
				c := o.(*certificatesv1.PodCertificateRequest).Status.Conditions
				return len(c) == 1 && c[0].Type == certificatesv1.PodCertificateRequestConditionTypeDenied
			},
			statusKeepsLabels: false,
		},
		{
			gvr: fc.WithResource("flowschemas"), kind: "FlowSchema",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &flowcontrolv1.FlowSchema{ObjectMeta: crudMeta(n, l, false), Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
					MatchingPrecedence:         9000, Rules: fsRules,
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*flowcontrolv1.FlowSchema).Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{
					Type: "SetByTest", Status: flowcontrolv1.ConditionTrue, Reason: "SetByTest", LastTransitionTime: metav1.Now()}}
			},
			statusSet: func(o runtime.Object) bool {
				for _, c := range o.(*flowcontrolv1.FlowSchema).Status.Conditions {
					if c.Type == "SetByTest" {
						return true
					}
				}
				return false
			},
			statusKeepsLabels: false,
		},
		{
			gvr: fc.WithResource("prioritylevelconfigurations"), kind: "PriorityLevelConfiguration",
			newObj: func(n string, l map[string]string) runtime.Object {
				shares := int32(1)
				return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: crudMeta(n, l, false), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementLimited,
					Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares,
						LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}},
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*flowcontrolv1.PriorityLevelConfiguration).Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{
					Type: "SetByTest", Status: flowcontrolv1.ConditionTrue, Reason: "SetByTest", LastTransitionTime: metav1.Now()}}
			},
			statusSet: func(o runtime.Object) bool {
				for _, c := range o.(*flowcontrolv1.PriorityLevelConfiguration).Status.Conditions {
					if c.Type == "SetByTest" {
						return true
					}
				}
				return false
			},
			statusKeepsLabels: false,
		},
	}
}
