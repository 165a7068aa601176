package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// legacySigner is the signer name of requests made through the old
// v1beta1 API without one; v1 refuses it on new requests.
const legacySigner = "kubernetes.io/legacy-unknown"

var (
	csrSpecPath       = field.NewPath("spec")
	csrConditionsPath = field.NewPath("status", "conditions")
	csrCertPath       = field.NewPath("status", "certificate")

	validUsages = sets.New[string](
		"signing", "digital signature", "content commitment", "key encipherment", "key agreement",
		"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth",
		"client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel",
		"ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc",
	)
)

// csrTolerance is what an update tolerates because the stored request
// already has it (and what only some subresources may do).
type csrTolerance struct {
	approvalConditions, certificate                                     bool // the approval / status subresource
	bothApprovedAndDenied, legacySigner, duplicateConditions, emptyType bool
	arbitraryCertificate, unknownUsages, duplicateUsages                bool
}

// tolerance returns what an update from old to csr tolerates (old nil: a
// create tolerates nothing).
func tolerance(csr, old *certificatesv1.CertificateSigningRequest) csrTolerance {
	if old == nil {
		return csrTolerance{}
	}
	var approved, denied, dupCond, emptyType bool
	seen := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range old.Status.Conditions {
		approved = approved || c.Type == certificatesv1.CertificateApproved
		denied = denied || c.Type == certificatesv1.CertificateDenied
		dupCond = dupCond || seen[c.Type]
		emptyType = emptyType || c.Type == ""
		seen[c.Type] = true
	}
	var unknown, dupUsage bool
	usages := map[certificatesv1.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		unknown = unknown || !validUsages.Has(string(u))
		dupUsage = dupUsage || usages[u]
		usages[u] = true
	}
	return csrTolerance{
		bothApprovedAndDenied: approved && denied,
		legacySigner:          old.Spec.SignerName == legacySigner,
		duplicateConditions:   dupCond,
		emptyType:             emptyType,
		arbitraryCertificate: bytes.Equal(csr.Status.Certificate, old.Status.Certificate) ||
			validateCertificate(old.Status.Certificate) != nil,
		unknownUsages:   unknown,
		duplicateUsages: dupUsage,
	}
}

// validateCSR checks a request as stored (create) or about to be (update).
func validateCSR(csr *certificatesv1.CertificateSigningRequest, t csrTolerance) field.ErrorList {
	errs := strategy.ValidateMeta(&csr.ObjectMeta, false, func(string, bool) []string { return nil })
	if err := checkRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(csrSpecPath.Child("request"), csr.Spec.Request, err.Error()))
	}
	errs = append(errs, validateUsages(csr.Spec.Usages, t)...)
	if !t.legacySigner && csr.Spec.SignerName == legacySigner {
		errs = append(errs, field.Invalid(csrSpecPath.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, strategy.ValidateSignerName(csrSpecPath.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(csrSpecPath.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(csr.Status.Conditions, t)...)
	if !t.arbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(csrCertPath, "<certificate data>", err.Error()))
		}
	}
	return errs
}

// parseRequest decodes a CSR from its "CERTIFICATE REQUEST" PEM block.
func parseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// checkRequest requires a parsable CSR whose signature verifies.
func checkRequest(pemBytes []byte) error {
	csr, err := parseRequest(pemBytes)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

func validateUsages(usages []certificatesv1.KeyUsage, t csrTolerance) field.ErrorList {
	p := csrSpecPath.Child("usages")
	var errs field.ErrorList
	if len(usages) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if !t.unknownUsages {
		for i, u := range usages {
			if !validUsages.Has(string(u)) {
				errs = append(errs, field.NotSupported(p.Index(i), u, sets.List(validUsages)))
			}
		}
	}
	if !t.duplicateUsages {
		for i, u := range usages {
			if slices.Contains(usages[:i], u) {
				errs = append(errs, field.Duplicate(p.Index(i), u))
			}
		}
	}
	return errs
}

// validateCSRConditions checks condition types and statuses: Approved,
// Denied and Failed may only be True, a type appears once. That Approved
// and Denied exclude each other is checked by bothApprovedAndDenied.
func validateCSRConditions(conds []certificatesv1.CertificateSigningRequestCondition, t csrTolerance) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range conds {
		p := csrConditionsPath.Index(i)
		if !t.emptyType && c.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, allowed))
		}
		if !t.duplicateConditions {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return errs
}

// approvedAndDenied is the error of a request both approved and denied,
// as kube-apiserver's declarative validation reports it (after all other
// errors); nil when the request is not both, or the stored one was.
func approvedAndDenied(csr *certificatesv1.CertificateSigningRequest, t csrTolerance) *field.Error {
	if t.bothApprovedAndDenied || countConditions(csr, certificatesv1.CertificateApproved) == 0 ||
		countConditions(csr, certificatesv1.CertificateDenied) == 0 {
		return nil
	}
	const approved, denied = `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`
	return field.Invalid(csrConditionsPath, "{"+approved+", "+denied+"}",
		"must specify at most one of: `"+approved+"`, `"+denied+"`")
}

// validateCertificate accepts an empty certificate, or one or more
// header-less CERTIFICATE PEM blocks that parse.
func validateCertificate(pemData []byte) error {
	if len(pemData) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		pemData = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateCSRUpdate checks an update through the main resource (t: no
// subresource rights), status (t.certificate) or approval
// (t.approvalConditions).
func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest, t csrTolerance) field.ErrorList {
	errs := validateCSR(csr, t)
	for _, ct := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if countConditions(csr, ct) < countConditions(old, ct) {
			errs = append(errs, field.Forbidden(csrConditionsPath, fmt.Sprintf("updates may not remove a condition of type %q", ct)))
		}
	}
	if !t.approvalConditions {
		// Modifying an existing Approved or Denied condition is not
		// possible here: the main resource keeps the stored status and
		// the status subresource keeps the stored instances of both.
		for _, ct := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			if countConditions(csr, ct) > countConditions(old, ct) {
				errs = append(errs, field.Forbidden(csrConditionsPath, fmt.Sprintf("updates may not add a condition of type %q", ct)))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		if !t.certificate {
			errs = append(errs, field.Forbidden(csrCertPath, "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(csrCertPath, "updates may not modify existing certificate content"))
		}
	}
	errs = append(errs, strategy.ValidateMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta)...)
	if err := approvedAndDenied(csr, t); err != nil {
		errs = append(errs, err)
	}
	return errs
}

func countConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	n := 0
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			n++
		}
	}
	return n
}
