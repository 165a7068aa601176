package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// certificatesTable returns the table of a certificates.k8s.io/v1 kind.
func certificatesTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "CertificateSigningRequest":
		return newTable(csrColumns, csrCells, now)
	case "ClusterTrustBundle":
		return newTable(ctbColumns, func(b *certificatesv1.ClusterTrustBundle, _ time.Time) []interface{} {
			return []interface{}{b.Name, orNone(b.Spec.SignerName)}
		}, now)
	case "PodCertificateRequest":
		return newTable(pcrColumns, pcrCells, now)
	}
	return nil
}

var csrColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	ageColumn,
	column("SignerName", "string", "The signer the request is for."),
	column("Requestor", "string", "The user who created the request."),
	column("RequestedDuration", "string", "The validity the request asks for (spec.expirationSeconds)."),
	column("Condition", "string", "Approved or Denied (else Pending), then Failed and Issued when so."),
}

func csrCells(c *certificatesv1.CertificateSigningRequest, now time.Time) []interface{} {
	requested := "<none>"
	if s := c.Spec.ExpirationSeconds; s != nil {
		requested = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return []interface{}{
		c.Name, age(c.CreationTimestamp, now), orNone(c.Spec.SignerName), c.Spec.Username, requested, csrCondition(c),
	}
}

// csrCondition is the Condition cell: Denied wins over Approved, else
// Pending; then ",Failed" and ",Issued" (a certificate is there).
func csrCondition(c *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	s := "Pending"
	switch {
	case denied:
		s = "Denied"
	case approved:
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if len(c.Status.Certificate) > 0 {
		s += ",Issued"
	}
	return s
}

var ctbColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("SignerName", "string", "The signer whose trust anchors the bundle holds."),
}

// The PodCertificateRequest columns: kube-apiserver sends the annotations
// column at priority 0, so kubectl shows it without -o wide.
var pcrColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("PodName", "string", "The pod the request is for."),
	column("ServiceAccountName", "string", "The service account of the pod."),
	column("NodeName", "string", "The node the pod is assigned to."),
	column("SignerName", "string", "The signer the request is for."),
	column("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
	column("UnverifiedUserAnnotations", "string", "The user annotations of the pod's projection, unverified."),
}

func pcrCells(r *certificatesv1.PodCertificateRequest, _ time.Time) []interface{} {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			state = c.Type
		}
	}
	return []interface{}{
		r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state,
		labels.FormatLabels(r.Spec.UnverifiedUserAnnotations),
	}
}
