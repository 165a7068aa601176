package conformance

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// The admission configuration, API services and dynamic resource
// allocation rows. Webhooks and policies match a group no cluster serves.

var crudRules = []admissionv1.RuleWithOperations{{
	Operations: []admissionv1.OperationType{admissionv1.Create},
	Rule: admissionv1.Rule{APIGroups: []string{"cg-crud.example.com"}, APIVersions: []string{"v1"},
		Resources: []string{"nothings"}},
}}

// crudAPIService names the APIService rows: v1.<row name>.crud.example.com.
func crudAPIService(n string) string { return "v1." + n + ".crud.example.com" }

func extensionCases() []crudCase {
	adm := admissionv1.SchemeGroupVersion
	dra := resourcev1.SchemeGroupVersion
	ignore, fail, none := admissionv1.Ignore, admissionv1.Fail, admissionv1.SideEffectClassNone
	url := func(path string) admissionv1.WebhookClientConfig {
		u := "https://crud.example.com/" + path
		return admissionv1.WebhookClientConfig{URL: &u}
	}
	match := &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: crudRules[0]}}}
	claimSpec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "crud-class"}}}}}
	return []crudCase{
		{
			gvr: adm.WithResource("validatingwebhookconfigurations"), kind: "ValidatingWebhookConfiguration",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: crudMeta(n, l, false), Webhooks: []admissionv1.ValidatingWebhook{{
					Name: "validate.crud.example.com", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none,
					FailurePolicy: &ignore, ClientConfig: url("validate"), Rules: crudRules}}}
			},
		},
		{
			gvr: adm.WithResource("mutatingwebhookconfigurations"), kind: "MutatingWebhookConfiguration",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &admissionv1.MutatingWebhookConfiguration{ObjectMeta: crudMeta(n, l, false), Webhooks: []admissionv1.MutatingWebhook{{
					Name: "mutate.crud.example.com", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none,
					FailurePolicy: &ignore, ClientConfig: url("mutate"), Rules: crudRules}}}
			},
		},
		{
			gvr: adm.WithResource("validatingadmissionpolicies"), kind: "ValidatingAdmissionPolicy",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: crudMeta(n, l, false), Spec: admissionv1.ValidatingAdmissionPolicySpec{
					FailurePolicy: &fail, MatchConstraints: match,
					Validations: []admissionv1.Validation{{Expression: "object.metadata.name != 'forbidden'", Message: "name must not be forbidden"}}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*admissionv1.ValidatingAdmissionPolicy).Status.Conditions = []metav1.Condition{setByTest()}
			},
			statusSet: func(o runtime.Object) bool {
				return hasSetByTest(o.(*admissionv1.ValidatingAdmissionPolicy).Status.Conditions)
			},
		},
		{
			gvr: adm.WithResource("validatingadmissionpolicybindings"), kind: "ValidatingAdmissionPolicyBinding",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: crudMeta(n, l, false), Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: n, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}}
			},
		},
		{
			gvr: adm.WithResource("mutatingadmissionpolicies"), kind: "MutatingAdmissionPolicy",
			newObj: func(n string, l map[string]string) runtime.Object {
				never := admissionv1.NeverReinvocationPolicy
				return &admissionv1.MutatingAdmissionPolicy{ObjectMeta: crudMeta(n, l, false), Spec: admissionv1.MutatingAdmissionPolicySpec{
					FailurePolicy: &fail, ReinvocationPolicy: never, MatchConstraints: match,
					Mutations: []admissionv1.Mutation{{PatchType: admissionv1.PatchTypeApplyConfiguration,
						ApplyConfiguration: &admissionv1.ApplyConfiguration{
							Expression: `Object{metadata: Object.metadata{labels: {"mutated": "true"}}}`}}}}}
			},
		},
		{
			gvr: adm.WithResource("mutatingadmissionpolicybindings"), kind: "MutatingAdmissionPolicyBinding",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &admissionv1.MutatingAdmissionPolicyBinding{ObjectMeta: crudMeta(n, l, false),
					Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: n}}
			},
		},
		{
			gvr: apiregistrationv1.SchemeGroupVersion.WithResource("apiservices"), kind: "APIService", name: crudAPIService,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &apiregistrationv1.APIService{ObjectMeta: crudMeta(n, l, false), Spec: apiregistrationv1.APIServiceSpec{
					Group: strings.TrimPrefix(n, "v1."), Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15,
					Service:               &apiregistrationv1.ServiceReference{Namespace: crudNamespace, Name: "crud-api", Port: new(int32(443))},
					InsecureSkipTLSVerify: true,
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*apiregistrationv1.APIService).Status.Conditions = []apiregistrationv1.APIServiceCondition{{
					Type: "SetByTest", Status: apiregistrationv1.ConditionTrue, Reason: "SetByTest", LastTransitionTime: metav1.Now()}}
			},
			statusSet: func(o runtime.Object) bool {
				for _, c := range o.(*apiregistrationv1.APIService).Status.Conditions {
					if c.Type == "SetByTest" {
						return true
					}
				}
				return false
			},
		},
		{
			gvr: dra.WithResource("deviceclasses"), kind: "DeviceClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &resourcev1.DeviceClass{ObjectMeta: crudMeta(n, l, false), Spec: resourcev1.DeviceClassSpec{
					Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "crud.example.com"`}}}}}
			},
		},
		{
			gvr: dra.WithResource("devicetaintrules"), kind: "DeviceTaintRule",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &resourcev1.DeviceTaintRule{ObjectMeta: crudMeta(n, l, false), Spec: resourcev1.DeviceTaintRuleSpec{
					DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: new("crud.example.com"), Pool: new("pool-a"), Device: new("dev-1")},
					Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Value: "true", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*resourcev1.DeviceTaintRule).Status.Conditions = []metav1.Condition{setByTest()}
			},
			statusSet: func(o runtime.Object) bool { return hasSetByTest(o.(*resourcev1.DeviceTaintRule).Status.Conditions) },
		},
		{
			gvr: dra.WithResource("resourceclaims"), kind: "ResourceClaim", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &resourcev1.ResourceClaim{ObjectMeta: crudMeta(n, l, true), Spec: *claimSpec.DeepCopy()}
			},
			setStatus: func(o runtime.Object) {
				o.(*resourcev1.ResourceClaim).Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
					Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: "crud.example.com", Pool: "pool-a", Device: "dev-0"}}}}
			},
			statusSet: func(o runtime.Object) bool {
				a := o.(*resourcev1.ResourceClaim).Status.Allocation
				return a != nil && len(a.Devices.Results) == 1 && a.Devices.Results[0].Device == "dev-0"
			},
		},
		{
			gvr: dra.WithResource("resourceclaimtemplates"), kind: "ResourceClaimTemplate", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &resourcev1.ResourceClaimTemplate{ObjectMeta: crudMeta(n, l, true),
					Spec: resourcev1.ResourceClaimTemplateSpec{Spec: *claimSpec.DeepCopy()}}
			},
		},
		{
			gvr: dra.WithResource("resourceslices"), kind: "ResourceSlice",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &resourcev1.ResourceSlice{ObjectMeta: crudMeta(n, l, false), Spec: resourcev1.ResourceSliceSpec{
					Driver: "crud.example.com", NodeName: new("node-x"),
					Pool:    resourcev1.ResourcePool{Name: "pool-a", Generation: 1, ResourceSliceCount: 1},
					Devices: []resourcev1.Device{{Name: "dev-0"}, {Name: "dev-1"}}}}
			},
		},
	}
}
