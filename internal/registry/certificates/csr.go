package certificates

import (
	"context"
	"reflect"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const csrResourceName = "certificatesigningrequests"

var csrGVK = certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest")

func csrResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: csrResourceName, Kind: "CertificateSigningRequest",
		ListKind: "CertificateSigningRequestList", Singular: "certificatesigningrequest", ShortNames: []string{"csr"},
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		// As kube-apiserver's strategy: a write of the request owns
		// neither its spec (which the server fills and freezes) nor status.
		ResetFields: [][]string{{"spec"}, {"status"}},
		New:         func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		NewList:     func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		Strategy: strategy.Typed[*certificatesv1.CertificateSigningRequest]{
			PrepareCreate: func(csr *certificatesv1.CertificateSigningRequest) {
				csr.Status = certificatesv1.CertificateSigningRequestStatus{}
			},
			PrepareUpdate: func(csr, old *certificatesv1.CertificateSigningRequest) {
				csr.Spec, csr.Status = old.Spec, old.Status
			},
			ValidateNew: func(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
				return validateCSR(csr, csrTolerance{})
			},
			ValidateChange: func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
				return validateCSRUpdate(csr, old, tolerance(csr, old))
			},
		},
		Status: strategy.TypedStatus[*certificatesv1.CertificateSigningRequest]{
			PrepareUpdate: prepareCSRStatus,
			ValidateChange: func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
				t := tolerance(csr, old)
				t.certificate = true
				return validateCSRUpdate(csr, old, t)
			},
		},
		Subresources: []registry.Subresource{{
			Name: "approval", Kind: csrGVK, Verbs: []string{"get", "patch", "update"},
			Update: strategy.TypedStatus[*certificatesv1.CertificateSigningRequest]{
				PrepareUpdate: func(csr, old *certificatesv1.CertificateSigningRequest) {
					conditions := csr.Status.Conditions
					csr.Spec, csr.Status = old.Spec, old.Status
					csr.Status.Conditions = conditions
				},
				ValidateChange: func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
					t := tolerance(csr, old)
					t.approvalConditions = true
					return validateCSRUpdate(csr, old, t)
				},
			},
			ResetFields: [][]string{{"spec"}, {"status", "certificate"}},
		}},
		Admit: admitCSR,
		Attrs: strategy.Attrs(false, func(csr *certificatesv1.CertificateSigningRequest, set fields.Set) {
			set["spec.signerName"] = csr.Spec.SignerName
		}),
		Table: printers.For(group, "CertificateSigningRequest"),
	}
}

// prepareCSRStatus keeps the spec, and the stored Approved and Denied
// conditions in place of those the update carries (when it carries as
// many: adding or removing them is refused by validation).
func prepareCSRStatus(csr, old *certificatesv1.CertificateSigningRequest) {
	csr.Spec = old.Spec
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
		if len(oldIdx) != len(newIdx) {
			continue
		}
		for i, j := range oldIdx {
			csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[j]
		}
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// admitCSR is what kube-apiserver does with the requesting user and its
// certificate admission: on create, the requester is the user (whatever
// the body says) and kube-apiserver-client requests for system:masters are
// refused; approval and status writes need "approve" and "sign" on the
// signer, and get the server's time on new conditions.
func admitCSR(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil, nil
	}
	switch {
	case a.Operation == registry.Create:
		setRequester(csr, a.User)
		return nil, restrictSubject(csr)
	case a.Subresource == "approval" || a.Subresource == "status":
		old := a.Old.(*certificatesv1.CertificateSigningRequest)
		stampConditions(csr, old, metav1.NewTime(env.Clock().Now()))
		t := tolerance(csr, old)
		t.approvalConditions, t.certificate = a.Subresource == "approval", a.Subresource == "status"
		if len(validateCSRUpdate(csr, old, t)) > 0 {
			return nil, nil // refused by validation first, as in kube-apiserver
		}
		return nil, authorizeCSRWrite(ctx, env, a.User, a.Subresource, csr, old)
	}
	return nil, nil
}

// setRequester records who asks for the certificate.
func setRequester(csr *certificatesv1.CertificateSigningRequest, u registry.UserInfo) {
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = u.Name, u.UID, u.Groups, nil
	if len(u.Extra) > 0 {
		csr.Spec.Extra = make(map[string]certificatesv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			csr.Spec.Extra[k] = v
		}
	}
}

// restrictSubject refuses a kubernetes.io/kube-apiserver-client request for
// the system:masters group. kube-apiserver checks it after validation, so
// an otherwise invalid request is left to validation.
func restrictSubject(csr *certificatesv1.CertificateSigningRequest) error {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	c := csr.DeepCopy()
	c.Status = certificatesv1.CertificateSigningRequestStatus{}
	if len(validateCSR(c, csrTolerance{})) > 0 {
		return nil
	}
	parsed, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return forbidden(csrResourceName, csr.Name, "failed to parse CSR: %v", err)
	}
	for _, org := range parsed.Subject.Organization {
		if org == "system:masters" {
			return forbidden(csrResourceName, csr.Name, "use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName)
		}
	}
	return nil
}

// stampConditions gives conditions without times the time now; a new
// condition whose type and status were already there keeps that
// transition time.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}

// authorizeCSRWrite checks the approver may "approve" for the stored
// signer name (approval), and the signer may "sign" when a status write
// changes the certificate or the conditions.
func authorizeCSRWrite(ctx context.Context, env registry.Env, user registry.UserInfo, sub string, csr, old *certificatesv1.CertificateSigningRequest) error {
	verb, msg := "approve", "user not permitted to approve requests with signerName %q"
	if sub == "status" {
		if reflect.DeepEqual(csr.Status.Certificate, old.Status.Certificate) &&
			apiequality.Semantic.DeepEqual(csr.Status.Conditions, old.Status.Conditions) {
			return nil
		}
		verb, msg = "sign", "user not permitted to sign requests with signerName %q"
	}
	if allowedForSigner(ctx, env, user, verb, old.Spec.SignerName) {
		return nil
	}
	return forbidden(csrResourceName, old.Name, msg, old.Spec.SignerName)
}
