package certificates

import (
	"fmt"

	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var pcrGVK = certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest")

// defaultMaxExpiration is the default of spec.maxExpirationSeconds (24 h).
const defaultMaxExpiration = 86400

func podCertificateRequestsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "podcertificaterequests", Kind: "PodCertificateRequest",
		ListKind: "PodCertificateRequestList", Singular: "podcertificaterequest", Namespaced: true,
		StorageVersion:        "v1beta1", // kube-apiserver's storage version: discovery's storageVersionHash
		NoGeneration:          true,      // as kube-apiserver: no metadata.generation
		NoUnconditionalUpdate: true,
		New:                   func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
		NewList:               func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
		Strategy: strategy.Typed[*certificatesv1.PodCertificateRequest]{
			Defaults: func(r *certificatesv1.PodCertificateRequest) {
				if r.Spec.MaxExpirationSeconds == nil {
					r.Spec.MaxExpirationSeconds = new(int32(defaultMaxExpiration))
				}
			},
			PrepareCreate: func(r *certificatesv1.PodCertificateRequest) {
				r.Status = certificatesv1.PodCertificateRequestStatus{}
			},
			PrepareUpdate: func(r, old *certificatesv1.PodCertificateRequest) { r.Status = old.Status },
			ValidateNew:   validatePCR,
			ValidateChange: func(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
				if !apiequality.Semantic.DeepEqual(r.Spec, old.Spec) {
					errs = append(errs, field.Invalid(field.NewPath("spec"), printedPCRSpec(&r.Spec), apivalidation.FieldImmutableErrorMsg))
				}
				return errs
			},
		},
		// The status rules need the server's clock: they are checked in
		// admitPCR, which the server runs right before this (empty)
		// validation.
		Status: strategy.TypedStatus[*certificatesv1.PodCertificateRequest]{
			PrepareUpdate: func(r, old *certificatesv1.PodCertificateRequest) {
				r.Spec = old.Spec
				strategy.ResetMetaForStatus(&r.ObjectMeta, &old.ObjectMeta)
			},
		},
		Admit: admitPCR,
		// As kube-apiserver: metadata.namespace is not a field label of
		// this kind (its selector names the namespace in the URL only).
		Attrs: strategy.Attrs(false, func(r *certificatesv1.PodCertificateRequest, set fields.Set) {
			set["spec.signerName"] = r.Spec.SignerName
			set["spec.podName"] = r.Spec.PodName
			set["spec.nodeName"] = string(r.Spec.NodeName)
		}),
		Table: printers.For(group, "PodCertificateRequest"),
	}
}

// admitPCR checks a status write: its rules, at the server's time, then
// (when the status changes) that the writer may "sign" for the signer.
func admitPCR(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Operation != registry.Update || a.Subresource != "status" {
		return nil, nil
	}
	r, ok1 := a.Object.(*certificatesv1.PodCertificateRequest)
	old, ok2 := a.Old.(*certificatesv1.PodCertificateRequest)
	if !ok1 || !ok2 {
		return nil, nil
	}
	if errs := validatePCRStatus(r, old, env.Clock().Now()); len(errs) > 0 {
		return nil, apierrors.NewInvalid(pcrGVK.GroupKind(), r.Name, errs)
	}
	if apiequality.Semantic.DeepEqual(old.Status, r.Status) ||
		allowedForSigner(ctx, env, a.User, "sign", old.Spec.SignerName) {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(pcrGVK.GroupKind(), r.Name, field.ErrorList{field.Forbidden(ctbSignerPath,
		fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", a.User.Name, old.Spec.SignerName))})
}

// pcrSpecValue is a spec as kube-apiserver prints it in the immutability
// error: its internal form, whose fields have no JSON names (the two it
// holds for older API versions stay empty).
type pcrSpecValue struct {
	SignerName                string
	PodName                   string
	PodUID                    string
	ServiceAccountName        string
	ServiceAccountUID         string
	NodeName                  string
	NodeUID                   string
	MaxExpirationSeconds      *int32
	PKIXPublicKey             []byte
	ProofOfPossession         []byte
	StubPKCS10Request         []byte
	UnverifiedUserAnnotations map[string]string
}

func printedPCRSpec(s *certificatesv1.PodCertificateRequestSpec) pcrSpecValue {
	return pcrSpecValue{
		SignerName: s.SignerName, PodName: s.PodName, PodUID: string(s.PodUID),
		ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: string(s.ServiceAccountUID),
		NodeName: string(s.NodeName), NodeUID: string(s.NodeUID), MaxExpirationSeconds: s.MaxExpirationSeconds,
		StubPKCS10Request: s.StubPKCS10Request, UnverifiedUserAnnotations: s.UnverifiedUserAnnotations,
	}
}
