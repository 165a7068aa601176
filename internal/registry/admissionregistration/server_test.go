package admissionregistration_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

const base = "/apis/admissionregistration.k8s.io/v1/"

// The answers below are kube-apiserver v1.37.2's to the same requests.
var rejections = []apitest.Rejection{
	{
		Name: "vap syntax error", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kinds-ext-vap1"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},"validations":[{"expression":"object.spec.replicas <= "}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-vap1" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <= ": compilation failed: ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | object.spec.replicas <= 
 | ........................^`,
		Causes: []string{"spec.validations[0].expression:FieldValueInvalid"},
	}, {
		Name: "vap type error (int) and undefined request field and messageExpression non-string", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kinds-ext-vap2"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},"validations":[{"expression":"object.spec.replicas + 1"},{"expression":"request.foo == 1"},{"expression":"true","messageExpression":"1"},{"expression":"params.x == 1"}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-vap2" is invalid: [spec.validations[0].expression: Invalid value: "object.spec.replicas + 1": must evaluate to bool but got int, spec.validations[1].expression: Invalid value: "request.foo == 1": compilation failed: ERROR: <input>:1:8: undefined field 'foo'
 | request.foo == 1
 | .......^, spec.validations[2].messageExpression: Invalid value: "1": must evaluate to string but got int, spec.validations[3].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')
 | params.x == 1
 | ^]`,
		Causes: []string{"spec.validations[0].expression:FieldValueInvalid", "spec.validations[1].expression:FieldValueInvalid", "spec.validations[2].messageExpression:FieldValueInvalid", "spec.validations[3].expression:FieldValueInvalid"},
	}, {
		Name: "vap empty", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kinds-ext-vap4"},"spec":{}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-vap4" is invalid: [spec.matchConstraints: Required value, spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]`,
		Causes:  []string{"spec.matchConstraints:FieldValueRequired", "spec.validations:FieldValueRequired", "spec.auditAnnotations:FieldValueRequired"},
	}, {
		Name: "vwc bad", Path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"kinds-ext-vwc1"},"webhooks":[{"name":"nodots","clientConfig":{"url":"http://example.com/x","caBundle":"bm90IHBlbQ=="},"rules":[{"operations":["CREATE","*"],"apiGroups":[""],"apiVersions":["v1"],"resources":[]}],"timeoutSeconds":31,"failurePolicy":"Maybe"},{"name":"nodots","clientConfig":{"service":{"name":"svc","namespace":"default","port":70000,"path":"x"}},"sideEffects":"Some","admissionReviewVersions":["v9"],"matchConditions":[{"name":"bad name!","expression":"object."}]},{"name":"a.b.c","clientConfig":{},"sideEffects":"None","admissionReviewVersions":["v1","v1"]}]}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "kinds-ext-vwc1" is invalid: [webhooks[0].name: Invalid value: "nodots": should be a domain with at least three segments separated by dots, webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations, webhooks[0].rules[0].resources: Required value, webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore", webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1, webhooks[1].name: Invalid value: "nodots": should be a domain with at least three segments separated by dots, webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", webhooks[1].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive, webhooks[1].clientConfig.service.path: Invalid value: "x": must start with a '/', webhooks[1].clientConfig.service.path: Invalid value: "x": segment[0] may not be empty, webhooks[1].matchConditions[0].expression: Invalid value: "object.": compilation failed: ERROR: <input>:1:8: Syntax error: no viable alternative at input '.'
 | object.
 | .......^, webhooks[1].matchConditions[0].name: Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), webhooks[1].admissionReviewVersions: Invalid value: ["v9"]: must include at least one of v1, v1beta1, webhooks[1].name: Duplicate value: "nodots", webhooks[2].clientConfig: Required value: exactly one of url or service is required, webhooks[2].admissionReviewVersions[1]: Invalid value: "v1": duplicate version]`,
		Causes: []string{"webhooks[0].name:FieldValueInvalid", "webhooks[0].rules[0].operations:FieldValueInvalid", "webhooks[0].rules[0].resources:FieldValueRequired", "webhooks[0].failurePolicy:FieldValueNotSupported", "webhooks[0].sideEffects:FieldValueRequired", "webhooks[0].timeoutSeconds:FieldValueInvalid", "webhooks[0].clientConfig.url:FieldValueInvalid", "webhooks[0].admissionReviewVersions:FieldValueRequired", "webhooks[1].name:FieldValueInvalid", "webhooks[1].sideEffects:FieldValueNotSupported", "webhooks[1].clientConfig.service.port:FieldValueInvalid", "webhooks[1].clientConfig.service.path:FieldValueInvalid", "webhooks[1].clientConfig.service.path:FieldValueInvalid", "webhooks[1].matchConditions[0].expression:FieldValueInvalid", "webhooks[1].matchConditions[0].name:FieldValueInvalid", "webhooks[1].admissionReviewVersions:FieldValueInvalid", "webhooks[1].name:FieldValueDuplicate", "webhooks[2].clientConfig:FieldValueRequired", "webhooks[2].admissionReviewVersions[1]:FieldValueInvalid"},
	}, {
		Name: "vapb empty", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"kinds-ext-vapb-bad1"},"spec":{}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "kinds-ext-vapb-bad1" is invalid: [spec.policyName: Required value, spec.validationActions: Required value]`,
		Causes:  []string{"spec.policyName:FieldValueRequired", "spec.validationActions:FieldValueRequired"},
	}, {
		Name: "vapb bad", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"kinds-ext-vapb-bad2"},"spec":{"policyName":"Bad_Policy","validationActions":["Deny","Warn","Deny","Explode"],"paramRef":{"name":"a/b","selector":{"matchLabels":{"a":"b"}},"parameterNotFoundAction":"Maybe"},"matchResources":{"matchPolicy":"Sometimes","resourceRules":[{"operations":["CREATE"],"apiGroups":["*","apps"],"apiVersions":["*","v1"],"resources":["*","pods","*/*"],"resourceNames":["x","x","a/b"],"scope":"Everywhere"}]}}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "kinds-ext-vapb-bad2" is invalid: [spec.policyName: Invalid value: "Bad_Policy": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.paramRef.name: Invalid value: "a/b": may not contain '/', spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Deny", "Allow", spec.matchResources.matchPolicy: Unsupported value: "Sometimes": supported values: "Equivalent", "Exact", spec.matchResources.resourceRules[0].resourceNames[1]: Duplicate value: "x", spec.matchResources.resourceRules[0].resourceNames[2]: Invalid value: "a/b": may not contain '/', spec.matchResources.resourceRules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups, spec.matchResources.resourceRules[0].apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions, spec.matchResources.resourceRules[0].resources: Invalid value: ["*","pods","*/*"]: if '*/*' is present, must not specify other resources, spec.matchResources.resourceRules[0].resources: Invalid value: ["*","pods","*/*"]: if '*' is present, must not specify other resources without subresources, spec.matchResources.resourceRules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced", spec.validationActions[2]: Duplicate value: "Deny", spec.validationActions[3]: Unsupported value: "Explode": supported values: "Audit", "Deny", "Warn", spec.validationActions: Invalid value: ["Deny","Warn","Deny","Explode"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)]`,
		Causes:  []string{"spec.policyName:FieldValueInvalid", "spec.paramRef.name:FieldValueInvalid", "spec.paramRef.name:FieldValueForbidden", "spec.paramRef.selector:FieldValueForbidden", "spec.paramRef.parameterNotFoundAction:FieldValueNotSupported", "spec.matchResources.matchPolicy:FieldValueNotSupported", "spec.matchResources.resourceRules[0].resourceNames[1]:FieldValueDuplicate", "spec.matchResources.resourceRules[0].resourceNames[2]:FieldValueInvalid", "spec.matchResources.resourceRules[0].apiGroups:FieldValueInvalid", "spec.matchResources.resourceRules[0].apiVersions:FieldValueInvalid", "spec.matchResources.resourceRules[0].resources:FieldValueInvalid", "spec.matchResources.resourceRules[0].resources:FieldValueInvalid", "spec.matchResources.resourceRules[0].scope:FieldValueNotSupported", "spec.validationActions[2]:FieldValueDuplicate", "spec.validationActions[3]:FieldValueNotSupported", "spec.validationActions:FieldValueInvalid"},
	}, {
		Name: "map bad", Path: "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":"kinds-ext-map-bad"},"spec":{"paramKind":{"apiVersion":"a/b/c","kind":"Bad_Kind"},"matchConstraints":{"resourceRules":[{"operations":["DELETE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}]},"variables":[{"name":"1bad","expression":"object.metadata.name"},{"name":"ok","expression":"object.metadata.name"}],"mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"variables.ok"}},{"patchType":"JSONPatch"},{"patchType":"Merge"},{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: variables.nope, value: 1}]"},"applyConfiguration":{"expression":"x"}}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `MutatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-map-bad" is invalid: [spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c, spec.paramKind.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE", spec.variables[0].name: Invalid value: "1bad": must be a valid CEL identifier, spec.mutations[0].applyConfiguration.expression: Invalid value: "variables.ok": must evaluate to Object but got dyn, spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch, spec.mutations[2].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch", spec.mutations[3].jsonPatch.expression: Invalid value: "[JSONPatch{op: 'add', path: variables.nope, value: 1}]": compilation failed: ERROR: <input>:1:38: undefined field 'nope'
 | [JSONPatch{op: 'add', path: variables.nope, value: 1}]
 | .....................................^, spec.mutations[3].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch, spec.reinvocationPolicy: Required value]`,
		Causes: []string{"spec.paramKind.apiVersion:FieldValueInvalid", "spec.paramKind.kind:FieldValueInvalid", "spec.matchConstraints.resourceRules.operations:FieldValueNotSupported", "spec.variables[0].name:FieldValueInvalid", "spec.mutations[0].applyConfiguration.expression:FieldValueInvalid", "spec.mutations[1].jsonPatch:FieldValueRequired", "spec.mutations[2].patchType:FieldValueNotSupported", "spec.mutations[3].jsonPatch.expression:FieldValueInvalid", "spec.mutations[3].applyConfiguration:FieldValueInvalid", "spec.reinvocationPolicy:FieldValueRequired"},
	}, {
		Name: "map empty", Path: "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":"kinds-ext-map-empty"},"spec":{}}`,
		Code: 422, Reason: "Invalid",
		Message: `MutatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-map-empty" is invalid: [spec.matchConstraints: Required value, spec.mutations: Required value: mutations must contain at least one item, spec.reinvocationPolicy: Required value]`,
		Causes:  []string{"spec.matchConstraints:FieldValueRequired", "spec.mutations:FieldValueRequired", "spec.reinvocationPolicy:FieldValueRequired"},
	}, {
		Name: "mapb bad", Path: "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding","metadata":{"name":"kinds-ext-mapb-bad"},"spec":{"matchResources":{"resourceRules":[{"operations":["DELETE","CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}]},"paramRef":{}}}`,
		Code: 422, Reason: "Invalid",
		Message: `MutatingAdmissionPolicyBinding.admissionregistration.k8s.io "kinds-ext-mapb-bad" is invalid: [spec.policyName: Required value, spec.paramRef: Required value: one of name or selector must be specified, spec.paramRef.parameterNotFoundAction: Required value, spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"]`,
		Causes:  []string{"spec.policyName:FieldValueRequired", "spec.paramRef:FieldValueRequired", "spec.paramRef.parameterNotFoundAction:FieldValueRequired", "spec.matchResources.resourceRules.operations:FieldValueNotSupported"},
	}, {
		Name: "vap more", Path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kinds-ext-vap-more"},"spec":{"failurePolicy":"Sometimes","paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"matchConstraints":{"resourceRules":[]},"matchConditions":[{"name":"m1","expression":"params.data.x == 'y'"},{"name":"m1","expression":"1"}],"variables":[{"name":"foo","expression":"object.metadata.name"},{"name":"if","expression":"variables.foo.size()"}],"validations":[{"expression":"variables.foo == 'x' && variables.bar == 1","message":"a\nb","reason":"Teapot"},{"expression":"authorizer.path('/x').check('get').allowed()","messageExpression":"  "}],"auditAnnotations":[{"key":"bad key","valueExpression":"1"},{"key":"k","valueExpression":"'v'"},{"key":"k","valueExpression":"null"}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingAdmissionPolicy.admissionregistration.k8s.io "kinds-ext-vap-more" is invalid: [spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore", spec.matchConstraints.resourceRules: Required value, spec.matchConditions[1].expression: Invalid value: "1": must evaluate to bool but got int, spec.matchConditions[1].name: Duplicate value: "m1", spec.variables[1].name: Invalid value: "if": must be a valid CEL identifier, spec.validations[0].expression: Invalid value: "variables.foo == 'x' && variables.bar == 1": compilation failed: ERROR: <input>:1:34: undefined field 'bar'
 | variables.foo == 'x' && variables.bar == 1
 | .................................^, spec.validations[0].message: Invalid value: "a\nb": must not contain line breaks, spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", spec.validations[1].messageExpression: Invalid value: "  ": must be non-empty if specified, spec.auditAnnotations[0].key: Invalid value: "kinds-ext-vap-more/bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of [string null_type] but got int, spec.auditAnnotations[2].key: Duplicate value: "k"]`,
		Causes: []string{"spec.failurePolicy:FieldValueNotSupported", "spec.matchConstraints.resourceRules:FieldValueRequired", "spec.matchConditions[1].expression:FieldValueInvalid", "spec.matchConditions[1].name:FieldValueDuplicate", "spec.variables[1].name:FieldValueInvalid", "spec.validations[0].expression:FieldValueInvalid", "spec.validations[0].message:FieldValueInvalid", "spec.validations[0].reason:FieldValueNotSupported", "spec.validations[1].messageExpression:FieldValueInvalid", "spec.auditAnnotations[0].key:FieldValueInvalid", "spec.auditAnnotations[0].valueExpression:FieldValueInvalid", "spec.auditAnnotations[2].key:FieldValueDuplicate"},
	}, {
		Name: "static suffix", Path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"a.static.k8s.io"}}`,
		Code: 422, Reason: "Invalid",
		Message: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "a.static.k8s.io" is invalid: metadata.name: Invalid value: "a.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`,
		Causes:  []string{"metadata.name:FieldValueInvalid"},
	}, {
		Name: "mwc bad", Path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
		Body: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"kinds-ext-mwc-bad"},"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://user@example.com/x?q=1#frag"},"sideEffects":"None","admissionReviewVersions":["v1"],"reinvocationPolicy":"Always","matchPolicy":"Fuzzy","namespaceSelector":{"matchExpressions":[{"key":"a","operator":"Like"}]},"rules":[{"operations":["READ"],"apiGroups":[],"apiVersions":[""],"resources":["pods/*","pods/log"],"scope":"Global"}]},{"name":"b.c.d","clientConfig":{"url":"https:///nohost","service":{"name":"s","namespace":"n"}},"sideEffects":"None","admissionReviewVersions":["v1"]},{"name":"c.d.e","clientConfig":{"service":{"name":"","namespace":"","path":"/Bad/"}},"sideEffects":"None","admissionReviewVersions":["V1!"]}]}`,
		Code: 422, Reason: "Invalid",
		Message: `MutatingWebhookConfiguration.admissionregistration.k8s.io "kinds-ext-mwc-bad" is invalid: [webhooks[0].rules[0].operations[0]: Unsupported value: "READ": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE", webhooks[0].rules[0].apiGroups: Required value, webhooks[0].rules[0].apiVersions[0]: Required value, webhooks[0].rules[0].resources[1]: Invalid value: "pods/log": if 'pods/*' is present, must not specify pods/log, webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced", webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact", webhooks[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator, webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never", webhooks[0].clientConfig.url: Invalid value: "user": user information is not permitted in the URL, webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL, webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL, webhooks[1].clientConfig: Required value: exactly one of url or service is required, webhooks[2].clientConfig.service.name: Required value, webhooks[2].clientConfig.service.namespace: Required value, webhooks[2].clientConfig.service.path: Invalid value: "/Bad/": segment[0]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), webhooks[2].admissionReviewVersions[0]: Invalid value: "V1!": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), webhooks[2].admissionReviewVersions: Invalid value: ["V1!"]: must include at least one of v1, v1beta1]`,
		Causes:  []string{"webhooks[0].rules[0].operations[0]:FieldValueNotSupported", "webhooks[0].rules[0].apiGroups:FieldValueRequired", "webhooks[0].rules[0].apiVersions[0]:FieldValueRequired", "webhooks[0].rules[0].resources[1]:FieldValueInvalid", "webhooks[0].rules[0].scope:FieldValueNotSupported", "webhooks[0].matchPolicy:FieldValueNotSupported", "webhooks[0].namespaceSelector.matchExpressions[0].operator:FieldValueInvalid", "webhooks[0].reinvocationPolicy:FieldValueNotSupported", "webhooks[0].clientConfig.url:FieldValueInvalid", "webhooks[0].clientConfig.url:FieldValueInvalid", "webhooks[0].clientConfig.url:FieldValueInvalid", "webhooks[1].clientConfig:FieldValueRequired", "webhooks[2].clientConfig.service.name:FieldValueRequired", "webhooks[2].clientConfig.service.namespace:FieldValueRequired", "webhooks[2].clientConfig.service.path:FieldValueInvalid", "webhooks[2].admissionReviewVersions[0]:FieldValueInvalid", "webhooks[2].admissionReviewVersions:FieldValueInvalid"},
	},
}

func TestAdmissionRegistrationOverHTTP(t *testing.T) {
	s := apitest.Start(t)
	s.Reject(t, "", rejections)

	// Valid objects, stored with kube-apiserver's defaults.
	for _, c := range []struct{ resource, body, want string }{
		{"validatingwebhookconfigurations",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingWebhookConfiguration, metadata: {name: vwc}, webhooks: [{name: check.example.com, clientConfig: {service: {name: svc, namespace: default}}, rules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}], sideEffects: None, admissionReviewVersions: [v1]}]}`,
			`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"generation": 1, "name": "vwc"}, "webhooks": [{"admissionReviewVersions": ["v1"], "clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 443}}, "failurePolicy": "Fail", "matchPolicy": "Equivalent", "name": "check.example.com", "namespaceSelector": {}, "objectSelector": {}, "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"], "scope": "*"}], "sideEffects": "None", "timeoutSeconds": 10}]}`},
		{"mutatingwebhookconfigurations",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: mwc}, webhooks: [{name: mutate.example.com, clientConfig: {url: "https://example.com/mutate"}, rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}], sideEffects: NoneOnDryRun, admissionReviewVersions: [v1, v1beta1]}, {name: mutate2.example.com, clientConfig: {url: "https://example.com/mutate2"}, sideEffects: None, admissionReviewVersions: [v1]}]}`,
			`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "metadata": {"generation": 1, "name": "mwc"}, "webhooks": [{"admissionReviewVersions": ["v1", "v1beta1"], "clientConfig": {"url": "https://example.com/mutate"}, "failurePolicy": "Fail", "matchPolicy": "Equivalent", "name": "mutate.example.com", "namespaceSelector": {}, "objectSelector": {}, "reinvocationPolicy": "Never", "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}], "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10}, {"admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://example.com/mutate2"}, "failurePolicy": "Fail", "matchPolicy": "Equivalent", "name": "mutate2.example.com", "namespaceSelector": {}, "objectSelector": {}, "reinvocationPolicy": "Never", "sideEffects": "None", "timeoutSeconds": 10}]}`},
		{"validatingadmissionpolicies",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy, metadata: {name: vap}, spec: {matchConstraints: {resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]}, validations: [{expression: "object.spec.replicas <= 5"}]}, status: {conditions: []}}`,
			`{"kind": "ValidatingAdmissionPolicy", "apiVersion": "admissionregistration.k8s.io/v1", "metadata": {"name": "vap", "generation": 1}, "spec": {"matchConstraints": {"namespaceSelector": {}, "objectSelector": {}, "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"], "scope": "*"}], "matchPolicy": "Equivalent"}, "validations": [{"expression": "object.spec.replicas <= 5"}], "failurePolicy": "Fail"}, "status": {}}`},
		{"validatingadmissionpolicybindings",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: vapb2}, spec: {policyName: vap, validationActions: [Audit, Warn], paramRef: {selector: {matchLabels: {a: b}}, parameterNotFoundAction: Allow}, matchResources: {resourceRules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]}}}`,
			`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"generation": 1, "name": "vapb2"}, "spec": {"matchResources": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*/*"], "scope": "*"}]}, "paramRef": {"parameterNotFoundAction": "Allow", "selector": {"matchLabels": {"a": "b"}}}, "policyName": "vap", "validationActions": ["Audit", "Warn"]}}`},
		{"mutatingadmissionpolicies",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingAdmissionPolicy, metadata: {name: map}, spec: {paramKind: {apiVersion: v1, kind: ConfigMap}, matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}}, {patchType: JSONPatch, jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels/x', value: 'y'}]"}}], reinvocationPolicy: IfNeeded}}`,
			`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"generation": 1, "name": "map"}, "spec": {"failurePolicy": "Fail", "matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}]}, "mutations": [{"applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}, "patchType": "ApplyConfiguration"}, {"jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/metadata/labels/x', value: 'y'}]"}, "patchType": "JSONPatch"}], "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "reinvocationPolicy": "IfNeeded"}}`},
		{"mutatingadmissionpolicybindings",
			`{apiVersion: admissionregistration.k8s.io/v1, kind: MutatingAdmissionPolicyBinding, metadata: {name: mapb}, spec: {policyName: map}}`,
			`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding", "metadata": {"generation": 1, "name": "mapb"}, "spec": {"policyName": "map"}}`},
	} {
		apitest.ExpectStored(t, s.Create(t, base+c.resource, c.body), c.want)
	}

	// An update that changes the webhooks moves the generation; the
	// status of a policy is written through its subresource only.
	vwc := s.GetMap(t, base+"validatingwebhookconfigurations/vwc")
	vwc["webhooks"].([]any)[0].(map[string]any)["timeoutSeconds"] = 5
	if code, out := s.Write(t, "PUT", base+"validatingwebhookconfigurations/vwc", vwc); code != http.StatusOK || out["metadata"].(map[string]any)["generation"] != 2.0 {
		t.Errorf("webhook update: %d %v", code, out)
	}
	vap := s.GetMap(t, base+"validatingadmissionpolicies/vap")
	vap["status"] = map[string]any{"observedGeneration": 1, "conditions": []any{map[string]any{"type": "Ready", "status": "Maybe", "reason": "x", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	code, out := s.Write(t, "PUT", base+"validatingadmissionpolicies/vap/status", vap)
	if code != http.StatusUnprocessableEntity {
		t.Errorf("bad status condition: %d %v", code, out)
	}
	vap["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["status"] = "True"
	if code, out := s.Write(t, "PUT", base+"validatingadmissionpolicies/vap/status", vap); code != http.StatusOK || out["status"].(map[string]any)["observedGeneration"] != 1.0 {
		t.Errorf("status update: %d %v", code, out)
	}

	// Printers.
	s.Create(t, base+"validatingadmissionpolicybindings", `{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: vapb}, spec: {policyName: vap, validationActions: [Deny], paramRef: {name: p1, namespace: default, parameterNotFoundAction: Deny}}}`)
	for _, c := range []struct {
		resource string
		cols     []string
		rows     [][]any
	}{
		{"validatingwebhookconfigurations", []string{"Name", "Webhooks", "Age"}, [][]any{{"vwc", 1.0}}},
		{"mutatingwebhookconfigurations", []string{"Name", "Webhooks", "Age"}, [][]any{{"mwc", 2.0}}},
		{"validatingadmissionpolicies", []string{"Name", "Validations", "ParamKind", "Age"}, [][]any{{"vap", 1.0, "<unset>"}}},
		{"mutatingadmissionpolicies", []string{"Name", "Mutations", "ParamKind", "Age"}, [][]any{{"map", 2.0, "v1/ConfigMap"}}},
		{"validatingadmissionpolicybindings", []string{"Name", "PolicyName", "ParamRef", "Age"}, [][]any{
			{"vapb", "vap", "default/p1"},
			{"vapb2", "vap", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}"}}},
		{"mutatingadmissionpolicybindings", []string{"Name", "PolicyName", "ParamRef", "Age"}, [][]any{{"mapb", "map", "<unset>"}}},
	} {
		cols, rows := s.Table(t, base+c.resource)
		if !reflect.DeepEqual(cols, c.cols) || len(rows) != len(c.rows) {
			t.Errorf("%s: columns %q rows %v", c.resource, cols, rows)
			continue
		}
		for i, want := range c.rows {
			if !reflect.DeepEqual(rows[i][:len(want)], want) {
				t.Errorf("%s: row %v, want %v", c.resource, rows[i], want)
			}
		}
	}
}
