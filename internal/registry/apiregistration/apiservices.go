package apiregistration

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func apiServicesResource(served func() []schema.GroupVersion) *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "apiservices", Kind: "APIService", ListKind: "APIServiceList",
		Singular: "apiservice", Categories: []string{"api-extensions"}, NoGeneration: true,
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &apiregv1.APIService{} },
		NewList:               func() runtime.Object { return &apiregv1.APIServiceList{} },
		Strategy: strategy.Typed[*apiregv1.APIService]{
			PrepareCreate: func(s *apiregv1.APIService) {
				s.Status = apiregv1.APIServiceStatus{}
				if s.Spec.Service == nil {
					// The creation time is the transition time, as
					// kube-apiserver's "now" on create.
					setLocalAvailable(s, s.CreationTimestamp)
				}
			},
			PrepareUpdate: func(s, old *apiregv1.APIService) { s.Status = old.Status },
			Defaults: func(s *apiregv1.APIService) {
				if svc := s.Spec.Service; svc != nil && svc.Port == nil {
					svc.Port = new(int32(443))
				}
			},
			ValidateNew: func(s *apiregv1.APIService) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&s.ObjectMeta, false, apiServiceName(s))
				return append(errs, validateAPIServiceSpec(&s.Spec)...)
			},
			ValidateChange: func(s, old *apiregv1.APIService) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
				errs = append(errs, strategy.ValidateGenericMeta(&s.ObjectMeta, false, apiServiceName(s))...)
				return append(errs, validateAPIServiceSpec(&s.Spec)...)
			},
		},
		Status: strategy.TypedStatus[*apiregv1.APIService]{
			PrepareUpdate: func(s, old *apiregv1.APIService) {
				s.Spec = old.Spec
				strategy.ResetMetaForStatus(&s.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(s, old *apiregv1.APIService) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
				for i, c := range s.Status.Conditions {
					switch c.Status {
					case apiregv1.ConditionTrue, apiregv1.ConditionFalse, apiregv1.ConditionUnknown:
					default:
						errs = append(errs, field.NotSupported(strategy.StatusPath.Child("conditions").Index(i).Child("status"),
							c.Status, []string{"True", "False", "Unknown"}))
					}
				}
				return errs
			},
		},
		Admit:           admitLocalAvailable,
		Bootstrap:       func() []runtime.Object { return localAPIServices(served()) },
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*apiregv1.APIService]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "APIService"),
	}
}

// admitLocalAvailable keeps a local APIService available on every update
// (of the object or its status), as kube-apiserver's availability
// controller does right after such a write.
func admitLocalAvailable(_ context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	s, ok := a.Object.(*apiregv1.APIService)
	if a.Operation != registry.Update || !ok || s.Spec.Service != nil {
		return nil, nil
	}
	setLocalAvailable(s, metav1.NewTime(env.Clock().Now().Truncate(1e9)))
	return nil, nil
}

// setLocalAvailable sets Available True (reason Local), moving the
// transition time only when the status changes.
func setLocalAvailable(s *apiregv1.APIService, now metav1.Time) {
	const reason, msg = "Local", "Local APIServices are always available"
	for i := range s.Status.Conditions {
		c := &s.Status.Conditions[i]
		if c.Type != apiregv1.Available {
			continue
		}
		if c.Status != apiregv1.ConditionTrue {
			c.Status, c.LastTransitionTime = apiregv1.ConditionTrue, now
		}
		c.Reason, c.Message = reason, msg
		return
	}
	s.Status.Conditions = append(s.Status.Conditions, apiregv1.APIServiceCondition{
		Type: apiregv1.Available, Status: apiregv1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: msg})
}

// apiServiceName requires the name to be version.group.
func apiServiceName(s *apiregv1.APIService) apivalidation.ValidateNameFunc {
	want := s.Spec.Version + "." + s.Spec.Group
	return func(name string, _ bool) []string {
		if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
			return msgs
		}
		if name != want {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", want)}
		}
		return nil
	}
}

func validateAPIServiceSpec(s *apiregv1.APIServiceSpec) field.ErrorList {
	p := strategy.SpecPath
	var errs field.ErrorList
	if s.Group == "" && s.Version != "v1" {
		errs = append(errs, field.Required(p.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if s.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), s.Group, msg))
		}
	}
	for _, msg := range validation.IsDNS1035Label(s.Version) {
		errs = append(errs, field.Invalid(p.Child("version"), s.Version, msg))
	}
	if s.GroupPriorityMinimum <= 0 || s.GroupPriorityMinimum > 20000 {
		errs = append(errs, field.Invalid(p.Child("groupPriorityMinimum"), s.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if s.VersionPriority <= 0 || s.VersionPriority > 1000 {
		errs = append(errs, field.Invalid(p.Child("versionPriority"), s.VersionPriority, "must be positive and less than 1000"))
	}
	if s.Service == nil {
		if len(s.CABundle) != 0 {
			errs = append(errs, field.Invalid(p.Child("caBundle"), fmt.Sprintf("%d bytes", len(s.CABundle)), "local APIServices may not have a caBundle"))
		}
		if s.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(p.Child("insecureSkipTLSVerify"), s.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	sp := p.Child("service")
	if s.Service.Namespace == "" {
		errs = append(errs, field.Required(sp.Child("namespace"), ""))
	}
	if s.Service.Name == "" {
		errs = append(errs, field.Required(sp.Child("name"), ""))
	}
	port := int32(443)
	if s.Service.Port != nil {
		port = *s.Service.Port
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(sp.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if s.InsecureSkipTLSVerify && len(s.CABundle) > 0 {
		errs = append(errs, field.Invalid(p.Child("insecureSkipTLSVerify"), s.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return errs
}
