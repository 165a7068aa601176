package certificates

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var (
	pcrStatusPath    = field.NewPath("status")
	chainPath        = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// validatePCRStatus checks a status write at time now: at most one of the
// Issued, Denied and Failed conditions (all True, nothing else), then one
// transition to a terminal state, after which the status never changes.
func validatePCRStatus(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := strategy.ValidateGenericMetaUpdate(&r.ObjectMeta, &old.ObjectMeta); len(errs) > 0 {
		return errs
	}
	errs := validatePCRConditions(r.Status.Conditions)
	errs = append(errs, metavalidation.ValidateConditions(r.Status.Conditions, pcrStatusPath.Child("conditions"))...)
	if len(errs) > 0 {
		return errs
	}
	switch {
	case pcrState(old) != "":
		return sameStatus(r.Status, old.Status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case pcrState(r) == certificatesv1.PodCertificateRequestConditionTypeDenied,
		pcrState(r) == certificatesv1.PodCertificateRequestConditionTypeFailed:
		return sameStatus(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions},
			"non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case pcrState(r) == certificatesv1.PodCertificateRequestConditionTypeIssued:
		return validateIssued(r, old, now)
	}
	return sameStatus(r.Status, old.Status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// validatePCRConditions allows the terminal condition types only, once,
// with status True. Their paths read "status.conditions.[i]", as
// kube-apiserver writes them.
func validatePCRConditions(conds []metav1.Condition) field.ErrorList {
	terminal := []string{
		certificatesv1.PodCertificateRequestConditionTypeIssued,
		certificatesv1.PodCertificateRequestConditionTypeDenied,
		certificatesv1.PodCertificateRequestConditionTypeFailed,
	}
	var errs field.ErrorList
	known := 0
	for i, c := range conds {
		p := pcrStatusPath.Child("conditions", fmt.Sprintf("[%d]", i))
		switch c.Type {
		case terminal[0], terminal[1], terminal[2]:
			if known++; known > 1 {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, terminal))
		}
	}
	return errs
}

// pcrState is the terminal condition a request is in ("" if pending).
func pcrState(r *certificatesv1.PodCertificateRequest) string {
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			if c.Status == metav1.ConditionTrue {
				return c.Type
			}
		}
	}
	return ""
}

func sameStatus(got, want certificatesv1.PodCertificateRequestStatus, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(got, want) {
		return nil
	}
	return field.ErrorList{field.Invalid(pcrStatusPath, field.OmitValueType{}, detail)}
}

// validateIssued checks an issuance: a chain of certificates whose leaf
// was issued to the requested key, and notBefore, notAfter and
// beginRefreshAt consistent with it, with the clock and with the
// requested maximum lifetime.
func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	st := &r.Status
	if len(st.CertificateChain) > maxChainSize {
		return field.ErrorList{field.TooLong(chainPath, st.CertificateChain, maxChainSize)}
	}
	leaf, rest, errs, stop := parseLeaf(st.CertificateChain, old)
	if stop {
		return errs
	}
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	if err := checkIssuedTimes(st, leaf, *r.Spec.MaxExpirationSeconds, now); err != nil {
		return field.ErrorList{err}
	}
	return checkIntermediates(st.CertificateChain, rest)
}

// parseLeaf decodes the first certificate of chain and checks its names
// (errs) and that it was issued to the key of old's stub request; stop
// means no further check applies.
func parseLeaf(chain string, old *certificatesv1.PodCertificateRequest) (leaf *x509.Certificate, rest []byte, errs field.ErrorList, stop bool) {
	block, rest := pem.Decode([]byte(chain))
	switch {
	case block == nil:
		return nil, nil, field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must contain at least one certificate")}, true
	case block.Type != "CERTIFICATE":
		return nil, nil, field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}, true
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, field.ErrorList{field.Invalid(chainPath, chain, "leaf certificate does not parse as valid X.509")}, true
	}
	errs = leafNameErrors(leaf)
	stub, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return nil, nil, append(errs, field.Invalid(stubPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")), true
	}
	if want, ok := stub.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !want.Equal(leaf.PublicKey) {
		return nil, nil, append(errs, field.Invalid(chainPath, chain, "leaf certificate was not issued to the requested public key")), true
	}
	return leaf, rest, errs, false
}

// leafNameErrors checks the DNS names and email addresses of a leaf.
func leafNameErrors(leaf *x509.Certificate) field.ErrorList {
	var errs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" {
			errs = append(errs, field.Invalid(chainPath, name, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(name, "..") {
			errs = append(errs, field.Invalid(chainPath, name, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			errs = append(errs, field.Invalid(chainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, addr := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(addr); err != nil {
			errs = append(errs, field.Invalid(chainPath, addr, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return errs
}

// checkIssuedTimes compares the status times with the leaf certificate,
// the clock (notBefore within 5 minutes) and the lifetime bounds.
func checkIssuedTimes(st *certificatesv1.PodCertificateRequestStatus, leaf *x509.Certificate, maxSeconds int32, now time.Time) *field.Error {
	nb, na, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !nb.Equal(leaf.NotBefore):
		return field.Invalid(notBeforePath, nb, "must be set to the NotBefore time encoded in the leaf certificate")
	case !(nb.After(now.Add(-5*time.Minute)) && nb.Before(now.Add(5*time.Minute))):
		return field.Invalid(notBeforePath, nb, "must be set to within 5 minutes of kube-apiserver's current time")
	case !na.Equal(leaf.NotAfter):
		return field.Invalid(notAfterPath, na, "must be set to the NotAfter time encoded in the leaf certificate")
	case lifetime < time.Hour:
		return field.Invalid(chainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")
	case lifetime > time.Duration(maxSeconds)*time.Second:
		return field.Invalid(chainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", maxSeconds))
	case refresh.Before(nb.Add(10 * time.Minute)):
		return field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes after status.notBefore")
	case refresh.After(na.Add(-10 * time.Minute)):
		return field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes before status.notAfter")
	}
	return nil
}

// checkIntermediates requires the rest of the chain to be certificates
// (it is not verified: partial chains cannot be).
func checkIntermediates(chain string, rest []byte) field.ErrorList {
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			// kube-apiserver's message, misspelling included.
			return field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(chainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
