package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// maxTrustBundleSize bounds spec.trustBundle (1 MiB).
const maxTrustBundleSize = 1 << 20

var (
	ctbSignerPath = field.NewPath("spec", "signerName")
	ctbBundlePath = field.NewPath("spec", "trustBundle")
)

func clusterTrustBundlesResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "clustertrustbundles", Kind: "ClusterTrustBundle",
		ListKind: "ClusterTrustBundleList", Singular: "clustertrustbundle",
		StorageVersion:        "v1beta1", // kube-apiserver's storage version: discovery's storageVersionHash
		NoGeneration:          true,      // as kube-apiserver: no metadata.generation
		NoUnconditionalUpdate: true,
		New:                   func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
		NewList:               func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
		Strategy: strategy.Typed[*certificatesv1.ClusterTrustBundle]{
			ValidateNew:    func(b *certificatesv1.ClusterTrustBundle) field.ErrorList { return validateCTB(b, true) },
			ValidateChange: validateCTBUpdate,
		},
		Admit: admitCTB,
		Attrs: strategy.Attrs(false, func(b *certificatesv1.ClusterTrustBundle, set fields.Set) {
			set["spec.signerName"] = b.Spec.SignerName
		}),
		Table: printers.For(group, "ClusterTrustBundle"),
	}
}

func validateCTB(b *certificatesv1.ClusterTrustBundle, parseBundle bool) field.ErrorList {
	errs := strategy.ValidateMeta(&b.ObjectMeta, false, strategy.ClusterTrustBundleName(b.Spec.SignerName))
	if b.Spec.SignerName != "" {
		errs = append(errs, strategy.ValidateSignerName(ctbSignerPath, b.Spec.SignerName)...)
	}
	if parseBundle {
		errs = append(errs, validateTrustBundle(b.Spec.TrustBundle)...)
	}
	return errs
}

// validateCTBUpdate checks an update; an unchanged bundle is not parsed
// again (Go's parsers may have changed since it was stored).
func validateCTBUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	errs := validateCTB(b, b.Spec.TrustBundle != old.Spec.TrustBundle)
	errs = append(errs, strategy.ValidateMetaUpdate(&b.ObjectMeta, &old.ObjectMeta)...)
	return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, old.Spec.SignerName, ctbSignerPath)...)
}

// validateTrustBundle requires header-less CERTIFICATE blocks of CA
// certificates, at least one and no duplicates; a malformed block hides
// the other two checks. The value is never printed.
func validateTrustBundle(in string) field.ErrorList {
	const omitted = "<value omitted>"
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(ctbBundlePath, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	var order []string
	indices := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if msg := badAnchor(b, i); msg != "" {
			errs = append(errs, field.Invalid(ctbBundlePath, omitted, msg))
			continue
		}
		if _, seen := indices[string(b.Bytes)]; !seen {
			order = append(order, string(b.Bytes))
		}
		indices[string(b.Bytes)] = append(indices[string(b.Bytes)], i)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(indices) == 0 {
		errs = append(errs, field.Invalid(ctbBundlePath, omitted, "at least one trust anchor must be provided"))
	}
	for _, k := range order {
		if idx := indices[k]; len(idx) > 1 {
			errs = append(errs, field.Invalid(ctbBundlePath, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}

// badAnchor says what is wrong with block i of a trust bundle ("" if
// nothing).
func badAnchor(b *pem.Block, i int) string {
	if b.Type != "CERTIFICATE" {
		return fmt.Sprintf("entry %d has bad block type: %v", i, b.Type)
	}
	if len(b.Headers) != 0 {
		return fmt.Sprintf("entry %d has PEM block headers", i)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return fmt.Sprintf("entry %d does not parse as X.509", i)
	case !cert.IsCA:
		return fmt.Sprintf("entry %d does not have the CA bit set", i)
	case !cert.BasicConstraintsValid:
		return fmt.Sprintf("entry %d has invalid basic constraints", i)
	}
	return ""
}

// admitCTB requires "attest" on the bundle's signer (kube-apiserver's
// ClusterTrustBundleAttest admission), unless the write changes only
// owner references and finalizers; an invalid bundle is left to
// validation.
func admitCTB(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	b, ok := a.Object.(*certificatesv1.ClusterTrustBundle)
	if !ok || b.Spec.SignerName == "" {
		return nil, nil
	}
	old, _ := a.Old.(*certificatesv1.ClusterTrustBundle)
	if old != nil && onlyGCFieldsChanged(b, old) {
		return nil, nil
	}
	if (old == nil && len(validateCTB(b, true)) > 0) || (old != nil && len(validateCTBUpdate(b, old)) > 0) {
		return nil, nil // refused by validation first, as in kube-apiserver
	}
	if allowedForSigner(ctx, env, a.User, "attest", b.Spec.SignerName) {
		return nil, nil
	}
	return nil, forbidden("clustertrustbundles", b.Name, "user not permitted to attest for signerName %q", b.Spec.SignerName)
}

// onlyGCFieldsChanged reports whether b differs from old in owner
// references, finalizers and managed fields only (the resourceVersion of
// an update is the stored one, or unset here, which is the same).
func onlyGCFieldsChanged(b, old *certificatesv1.ClusterTrustBundle) bool {
	c := b.DeepCopy()
	c.OwnerReferences, c.Finalizers, c.ManagedFields = old.OwnerReferences, old.Finalizers, old.ManagedFields
	c.ResourceVersion = old.ResourceVersion
	return apiequality.Semantic.DeepEqual(c, old)
}
