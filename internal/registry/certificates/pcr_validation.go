package certificates

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Limits of a PodCertificateRequest, as kube-apiserver's.
const (
	maxUIDLength        = 128
	minMaxExpiration    = 3600           // 1 h
	maxMaxExpiration    = 91 * 24 * 3600 // 91 days
	maxK8sMaxExpiration = 24 * 3600      // kubernetes.io signers
	maxStubRequestSize  = 10 * 1024      // spec.stubPKCS10Request
	maxChainSize        = 100 * 1024     // status.certificateChain
)

var (
	pcrSpecPath = field.NewPath("spec")
	stubPath    = field.NewPath("spec", "stubPKCS10Request")
)

// validatePCR checks a new request: names and UIDs of the pod, service
// account and node, the signer, the user annotations, the expiration
// bound and the stub PKCS#10 request.
func validatePCR(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	s := &r.Spec
	errs := strategy.ValidateGenericMeta(&r.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, strategy.ValidateSignerName(pcrSpecPath.Child("signerName"), s.SignerName)...)
	if s.UnverifiedUserAnnotations != nil {
		errs = append(errs, strategy.ValidateUserAnnotations(pcrSpecPath.Child("unverifiedUserAnnotations"), s.UnverifiedUserAnnotations)...)
	}
	errs = append(errs, nameErrors("podName", s.PodName)...)
	errs = append(errs, uidErrors("podUID", string(s.PodUID))...)
	errs = append(errs, nameErrors("serviceAccountName", s.ServiceAccountName)...)
	errs = append(errs, uidErrors("serviceAccountUID", string(s.ServiceAccountUID))...)
	errs = append(errs, nameErrors("nodeName", string(s.NodeName))...)
	errs = append(errs, uidErrors("nodeUID", string(s.NodeUID))...)
	if s.MaxExpirationSeconds == nil {
		return append(errs, field.Required(pcrSpecPath.Child("maxExpirationSeconds"), "must be set"))
	}
	hi := int32(maxMaxExpiration)
	if strategy.IsKubernetesSigner(s.SignerName) {
		hi = maxK8sMaxExpiration
	}
	if v := *s.MaxExpirationSeconds; v < minMaxExpiration || v > hi {
		errs = append(errs, field.Invalid(pcrSpecPath.Child("maxExpirationSeconds"), s.MaxExpirationSeconds,
			fmt.Sprintf("must be in the range [%d, %d]", minMaxExpiration, hi)))
	}
	if len(s.StubPKCS10Request) == 0 {
		// certificates.k8s.io/v1 has no pkixPublicKey and proofOfPossession,
		// the other way kube-apiserver accepts.
		return append(errs, field.Invalid(pcrSpecPath, field.OmitValueType{},
			"exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubRequest(s.StubPKCS10Request)...)
}

func nameErrors(f, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(v, false) {
		errs = append(errs, field.Invalid(pcrSpecPath.Child(f), v, msg))
	}
	return errs
}

func uidErrors(f, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Invalid(pcrSpecPath.Child(f), v, "must not be empty")}
	case len(v) > maxUIDLength:
		return field.ErrorList{field.TooLong(pcrSpecPath.Child(f), v, maxUIDLength)}
	}
	return nil
}

// validateStubRequest requires a PKCS#10 request signed by a supported key:
// Ed25519, ECDSA on P-256, P-384 or P-521, RSA of 3072 or 4096 bits. What
// it asks for is not looked at (kubelet sends empty ones).
func validateStubRequest(der []byte) field.ErrorList {
	if len(der) > maxStubRequestSize {
		return field.ErrorList{field.TooLong(stubPath, der, maxStubRequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(stubPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(stubPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if req.CheckSignature() != nil {
		return field.ErrorList{field.Invalid(stubPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}
