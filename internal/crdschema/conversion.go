package crdschema

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	"github.com/setpoint-dev/setpoint/internal/webhookconfig"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// reviewVersions are the ConversionReview versions the server speaks.
var reviewVersions = []string{"v1", "v1beta1"}

// validateConversion checks spec.conversion as Kubernetes does. Kubernetes
// validates the internal form of the CRD, so its paths are those of that
// form: spec.conversion.webhookClientConfig and
// spec.conversion.conversionReviewVersions (webhook.clientConfig and
// webhook.conversionReviewVersions in v1). old is the CRD before an update
// (nil on create): an update may keep review versions none of which the
// server speaks, and an invalid caBundle, when the old CRD had them (or was
// not yet established).
func validateConversion(c *apiextv1.CustomResourceConversion, old *apiextv1.CustomResourceDefinition, p *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	switch c.Strategy {
	case "":
		errs = append(errs, field.Required(p.Child("strategy"), ""))
	case apiextv1.NoneConverter, apiextv1.WebhookConverter:
	default:
		errs = append(errs, field.NotSupported(p.Child("strategy"), c.Strategy, []string{string(apiextv1.NoneConverter), string(apiextv1.WebhookConverter)}))
	}
	var cc *apiextv1.WebhookClientConfig
	var versions []string
	if c.Webhook != nil {
		cc, versions = c.Webhook.ClientConfig, c.Webhook.ConversionReviewVersions
	}
	ccPath, vPath := p.Child("webhookClientConfig"), p.Child("conversionReviewVersions")
	if c.Strategy != apiextv1.WebhookConverter {
		if cc != nil {
			errs = append(errs, field.Forbidden(ccPath, "should not be set when strategy is not set to Webhook"))
		}
		if len(versions) > 0 {
			errs = append(errs, field.Forbidden(vPath, "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	if cc == nil {
		errs = append(errs, field.Required(ccPath, "required when strategy is set to Webhook"))
	} else {
		errs = append(errs, validateClientConfig(cc, old, ccPath)...)
	}
	return append(errs, validateReviewVersions(versions, requireKnownReview(old), vPath)...)
}

func validateClientConfig(cc *apiextv1.WebhookClientConfig, old *apiextv1.CustomResourceDefinition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(p, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhookconfig.ValidateURL(p.Child("url"), *cc.URL)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, webhookconfig.ValidateService(p.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
	}
	if len(cc.CABundle) > 0 && !allowInvalidCABundle(old) {
		if err := checkCABundle(cc.CABundle); err != nil {
			errs = append(errs, field.Invalid(p.Child("caBundle"), cc.CABundle, err.Error()))
		}
	}
	return errs
}

// requireKnownReview: a create, or an update of a CRD that named a review
// version the server speaks (or none), must name one.
func requireKnownReview(old *apiextv1.CustomResourceDefinition) bool {
	if old == nil || old.Spec.Conversion == nil || old.Spec.Conversion.Webhook == nil {
		return true
	}
	prev := old.Spec.Conversion.Webhook.ConversionReviewVersions
	return len(prev) == 0 || slices.ContainsFunc(prev, func(v string) bool { return slices.Contains(reviewVersions, v) })
}

// allowInvalidCABundle: an update may keep an invalid caBundle when the CRD
// is not established yet, or its old caBundle was invalid too.
func allowInvalidCABundle(old *apiextv1.CustomResourceDefinition) bool {
	if old == nil {
		return false
	}
	established := false
	for _, c := range old.Status.Conditions {
		if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
			established = true
		}
	}
	if !established {
		return true
	}
	oc := old.Spec.Conversion
	if oc == nil || oc.Webhook == nil || oc.Webhook.ClientConfig == nil || len(oc.Webhook.ClientConfig.CABundle) == 0 {
		return false
	}
	return checkCABundle(oc.Webhook.ClientConfig.CABundle) != nil
}

func validateReviewVersions(versions []string, requireKnown bool, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	known := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		known = known || slices.Contains(reviewVersions, v)
	}
	if requireKnown && !known {
		errs = append(errs, field.Invalid(p, versions, "must include at least one of v1, v1beta1"))
	}
	return errs
}

// checkCABundle parses a PEM bundle as client-go's transport does, with
// its messages.
func checkCABundle(data []byte) error {
	if x509.NewCertPool().AppendCertsFromPEM(data) {
		return nil
	}
	return fmt.Errorf("unable to load root certificates: %w", caDataError(data))
}

func caDataError(data []byte) error {
	for len(data) > 0 {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return errors.New("unable to parse bytes as PEM block")
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("failed to parse certificate: %w", err)
		}
	}
	return errors.New("no valid certificate authority data seen")
}
