package admissionregistration

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func validatingWebhookConfigurationsResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "validatingwebhookconfigurations",
		Kind: "ValidatingWebhookConfiguration", ListKind: "ValidatingWebhookConfigurationList",
		Singular: "validatingwebhookconfiguration", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &admissionv1.ValidatingWebhookConfiguration{} },
		NewList:               func() runtime.Object { return &admissionv1.ValidatingWebhookConfigurationList{} },
		Strategy: strategy.Typed[*admissionv1.ValidatingWebhookConfiguration]{
			Defaults: func(c *admissionv1.ValidatingWebhookConfiguration) {
				for i := range c.Webhooks {
					defaultWebhook(validatingHook(&c.Webhooks[i]))
				}
			},
			ValidateNew: func(c *admissionv1.ValidatingWebhookConfiguration) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validateWebhooks(validatingHooks(c.Webhooks), newWebhookOptions())...)
				return append(errs, validateStaticSuffix(c.Name)...)
			},
			ValidateChange: func(c, old *admissionv1.ValidatingWebhookConfiguration) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				hooks := validatingHooks(c.Webhooks)
				return append(errs, validateWebhooks(hooks, updateWebhookOptions(hooks, validatingHooks(old.Webhooks)))...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*admissionv1.ValidatingWebhookConfiguration]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "ValidatingWebhookConfiguration"),
	}
}

func mutatingWebhookConfigurationsResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "mutatingwebhookconfigurations",
		Kind: "MutatingWebhookConfiguration", ListKind: "MutatingWebhookConfigurationList",
		Singular: "mutatingwebhookconfiguration", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &admissionv1.MutatingWebhookConfiguration{} },
		NewList:               func() runtime.Object { return &admissionv1.MutatingWebhookConfigurationList{} },
		Strategy: strategy.Typed[*admissionv1.MutatingWebhookConfiguration]{
			Defaults: func(c *admissionv1.MutatingWebhookConfiguration) {
				for i := range c.Webhooks {
					h := mutatingHook(&c.Webhooks[i])
					defaultWebhook(h)
					if c.Webhooks[i].ReinvocationPolicy == nil {
						c.Webhooks[i].ReinvocationPolicy = new(admissionv1.NeverReinvocationPolicy)
					}
				}
			},
			ValidateNew: func(c *admissionv1.MutatingWebhookConfiguration) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validateWebhooks(mutatingHooks(c.Webhooks), newWebhookOptions())...)
				return append(errs, validateStaticSuffix(c.Name)...)
			},
			ValidateChange: func(c, old *admissionv1.MutatingWebhookConfiguration) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				hooks := mutatingHooks(c.Webhooks)
				return append(errs, validateWebhooks(hooks, updateWebhookOptions(hooks, mutatingHooks(old.Webhooks)))...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*admissionv1.MutatingWebhookConfiguration]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "MutatingWebhookConfiguration"),
	}
}

// hook is a validating or mutating webhook seen through pointers to its
// fields (reinvocation is nil for validating webhooks).
type hook struct {
	name                    string
	clientConfig            *admissionv1.WebhookClientConfig
	rules                   []admissionv1.RuleWithOperations
	failurePolicy           **admissionv1.FailurePolicyType
	matchPolicy             **admissionv1.MatchPolicyType
	namespaceSel, objectSel **metav1.LabelSelector
	sideEffects             *admissionv1.SideEffectClass
	timeoutSeconds          **int32
	reviewVersions          []string
	matchConditions         []admissionv1.MatchCondition
	reinvocation            *admissionv1.ReinvocationPolicyType
	mutating                bool
}

func validatingHook(w *admissionv1.ValidatingWebhook) *hook {
	return &hook{name: w.Name, clientConfig: &w.ClientConfig, rules: w.Rules, failurePolicy: &w.FailurePolicy,
		matchPolicy: &w.MatchPolicy, namespaceSel: &w.NamespaceSelector, objectSel: &w.ObjectSelector,
		sideEffects: w.SideEffects, timeoutSeconds: &w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
		matchConditions: w.MatchConditions}
}

func mutatingHook(w *admissionv1.MutatingWebhook) *hook {
	return &hook{name: w.Name, clientConfig: &w.ClientConfig, rules: w.Rules, failurePolicy: &w.FailurePolicy,
		matchPolicy: &w.MatchPolicy, namespaceSel: &w.NamespaceSelector, objectSel: &w.ObjectSelector,
		sideEffects: w.SideEffects, timeoutSeconds: &w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
		matchConditions: w.MatchConditions, reinvocation: w.ReinvocationPolicy, mutating: true}
}

func validatingHooks(ws []admissionv1.ValidatingWebhook) []*hook {
	out := make([]*hook, len(ws))
	for i := range ws {
		out[i] = validatingHook(&ws[i])
	}
	return out
}

func mutatingHooks(ws []admissionv1.MutatingWebhook) []*hook {
	out := make([]*hook, len(ws))
	for i := range ws {
		out[i] = mutatingHook(&ws[i])
	}
	return out
}

// defaultWebhook fills kube-apiserver's defaults: failurePolicy Fail,
// matchPolicy Equivalent, empty selectors, timeout 10 s, rules' scope "*",
// a service's port 443.
func defaultWebhook(h *hook) {
	if *h.failurePolicy == nil {
		*h.failurePolicy = new(admissionv1.Fail)
	}
	if *h.matchPolicy == nil {
		*h.matchPolicy = new(admissionv1.Equivalent)
	}
	if *h.namespaceSel == nil {
		*h.namespaceSel = &metav1.LabelSelector{}
	}
	if *h.objectSel == nil {
		*h.objectSel = &metav1.LabelSelector{}
	}
	if *h.timeoutSeconds == nil {
		*h.timeoutSeconds = new(int32(10))
	}
	for i := range h.rules {
		defaultRule(&h.rules[i].Rule)
	}
	if s := h.clientConfig.Service; s != nil && s.Port == nil {
		s.Port = new(int32(443))
	}
}

func defaultRule(r *admissionv1.Rule) {
	if r.Scope == nil {
		r.Scope = new(admissionv1.AllScopes)
	}
}

// webhookOptions are the rules an update relaxes for what the stored
// object already has, as kube-apiserver does.
type webhookOptions struct {
	ignoreMatchConditions, requireNoSideEffects, requireKnownVersions bool
	requireUniqueNames, allowInvalidLabelValue                        bool
	storedConditions                                                  sets.Set[string]
}

func newWebhookOptions() webhookOptions {
	return webhookOptions{requireNoSideEffects: true, requireKnownVersions: true, requireUniqueNames: true}
}

func updateWebhookOptions(hooks, old []*hook) webhookOptions {
	o := webhookOptions{requireNoSideEffects: true, requireKnownVersions: true, requireUniqueNames: true,
		ignoreMatchConditions: len(hooks) == len(old), storedConditions: sets.New[string]()}
	names := sets.New[string]()
	for i, h := range old {
		if h.sideEffects == nil || !containsString(noSideEffects, string(*h.sideEffects)) {
			o.requireNoSideEffects = false
		}
		if len(h.reviewVersions) > 0 && !anyOf(h.reviewVersions, reviewVersions) {
			o.requireKnownVersions = false
		}
		if names.Has(h.name) {
			o.requireUniqueNames = false
		}
		names.Insert(h.name)
		for _, s := range []*metav1.LabelSelector{*h.namespaceSel, *h.objectSel} {
			if len(labelSelector(nil, s, false)) > 0 {
				o.allowInvalidLabelValue = true
			}
		}
		if o.ignoreMatchConditions && !semanticEqual(hooks[i].matchConditions, h.matchConditions) {
			o.ignoreMatchConditions = false
		}
		for _, mc := range h.matchConditions {
			o.storedConditions.Insert(mc.Expression)
		}
	}
	return o
}

func validateWebhooks(hooks []*hook, o webhookOptions) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, h := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(p, h, o)...)
		errs = append(errs, validateReviewVersions(p.Child("admissionReviewVersions"), h.reviewVersions, o.requireKnownVersions)...)
		if o.requireUniqueNames && h.name != "" {
			if names.Has(h.name) {
				errs = append(errs, field.Duplicate(p.Child("name"), h.name))
			}
			names.Insert(h.name)
		}
	}
	return errs
}

func validateWebhook(p *field.Path, h *hook, o webhookOptions) field.ErrorList {
	errs := isFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(p.Child("rules").Index(i), &h.rules[i])...)
	}
	if f := *h.failurePolicy; f != nil {
		errs = append(errs, notSupported(p.Child("failurePolicy"), *f, failurePolicies)...)
	}
	if m := *h.matchPolicy; m != nil {
		errs = append(errs, notSupported(p.Child("matchPolicy"), *m, matchPolicies)...)
	}
	allowed := allSideEffects
	if o.requireNoSideEffects {
		allowed = noSideEffects
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of "+joinComma(allowed)))
	} else {
		errs = append(errs, notSupported(p.Child("sideEffects"), *h.sideEffects, allowed)...)
	}
	if t := *h.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	errs = append(errs, labelSelector(p.Child("namespaceSelector"), *h.namespaceSel, o.allowInvalidLabelValue)...)
	errs = append(errs, labelSelector(p.Child("objectSelector"), *h.objectSel, o.allowInvalidLabelValue)...)
	if h.mutating && h.reinvocation != nil {
		errs = append(errs, notSupported(p.Child("reinvocationPolicy"), *h.reinvocation, reinvocation)...)
	}
	errs = append(errs, validateClientConfig(p.Child("clientConfig"), h.clientConfig)...)
	if !o.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(p.Child("matchConditions"), h.matchConditions, matchConditionOptions{stored: o.storedConditions})...)
	}
	return errs
}
