package printers

import (
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// admissionregistrationTable returns the table of an
// admissionregistration.k8s.io/v1 kind, nil for none.
func admissionregistrationTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "ValidatingWebhookConfiguration":
		return newTable(webhookColumns, func(c *admissionv1.ValidatingWebhookConfiguration, now time.Time) []interface{} {
			return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}
		}, now)
	case "MutatingWebhookConfiguration":
		return newTable(webhookColumns, func(c *admissionv1.MutatingWebhookConfiguration, now time.Time) []interface{} {
			return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}
		}, now)
	case "ValidatingAdmissionPolicy":
		return newTable(validatingPolicyColumns, func(p *admissionv1.ValidatingAdmissionPolicy, now time.Time) []interface{} {
			return []interface{}{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}
		}, now)
	case "MutatingAdmissionPolicy":
		return newTable(mutatingPolicyColumns, func(p *admissionv1.MutatingAdmissionPolicy, now time.Time) []interface{} {
			return []interface{}{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}
		}, now)
	case "ValidatingAdmissionPolicyBinding":
		return newTable(policyBindingColumns, func(b *admissionv1.ValidatingAdmissionPolicyBinding, now time.Time) []interface{} {
			return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}
		}, now)
	case "MutatingAdmissionPolicyBinding":
		return newTable(policyBindingColumns, func(b *admissionv1.MutatingAdmissionPolicyBinding, now time.Time) []interface{} {
			return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}
		}, now)
	}
	return nil
}

var (
	webhookColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("Webhooks", "integer", "The number of webhooks of the configuration."), ageColumn,
	}
	paramKindColumn         = column("ParamKind", "string", "The kind of the policy's parameter resource.")
	validatingPolicyColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("Validations", "integer", "The number of validations of the policy."), paramKindColumn, ageColumn,
	}
	mutatingPolicyColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("Mutations", "integer", "The number of mutations of the policy."), paramKindColumn, ageColumn,
	}
	policyBindingColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("PolicyName", "string", "The policy the binding binds."),
		column("ParamRef", "string", "The parameter resource the binding uses."), ageColumn,
	}
)

func paramKindCell(k *admissionv1.ParamKind) string {
	if k == nil {
		return "<unset>"
	}
	return k.APIVersion + "/" + k.Kind
}

// paramRefCell is "namespace/name", "*/name" when no namespace is named (a
// cluster-scoped parameter or the request's namespace), the selector
// (as Go prints it, as kube-apiserver does), or "<unset>".
func paramRefCell(r *admissionv1.ParamRef) string {
	switch {
	case r == nil:
		return "<unset>"
	case r.Name != "" && r.Namespace != "":
		return r.Namespace + "/" + r.Name
	case r.Name != "":
		return "*/" + r.Name
	case r.Selector != nil:
		return r.Selector.String()
	}
	return "<unset>"
}
