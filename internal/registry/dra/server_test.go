package dra_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

const (
	base   = "/apis/resource.k8s.io/v1/"
	claims = base + "namespaces/default/resourceclaims"
)

// The answers below are kube-apiserver v1.37.2's to the same requests.
var rejections = []apitest.Rejection{
	{
		Name: "deviceclass bad cel", Path: "/apis/resource.k8s.io/v1/deviceclasses",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"kinds-ext-dc1"},"spec":{"selectors":[{"cel":{"expression":"device.driver == "}},{"cel":{"expression":"device.attributes['x'].foo + 1"}},{"cel":{"expression":"object.foo"}},{"cel":{"expression":""}},{},{"cel":{"expression":"device.attributes['x'].foo"}},{"cel":{"expression":"cel.bind(a, device.attributes['gpu.example.com'], a.model == 'x') && device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) > 0 && device.allowMultipleAllocations"}}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `DeviceClass.resource.k8s.io "kinds-ext-dc1" is invalid: [spec.selectors[0].cel.expression: Invalid value: "device.driver == ": compilation failed: ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | device.driver == 
 | .................^, spec.selectors[1].cel.expression: Invalid value: "device.attributes['x'].foo + 1": must evaluate to bool or the unknown type, not int, spec.selectors[2].cel.expression: Invalid value: "object.foo": compilation failed: ERROR: <input>:1:1: undeclared reference to 'object' (in container '')
 | object.foo
 | ^, spec.selectors[3].cel.expression: Invalid value: "": compilation failed: ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}, spec.selectors[4].cel: Required value]`,
		Causes: []string{"spec.selectors[0].cel.expression:FieldValueInvalid", "spec.selectors[1].cel.expression:FieldValueInvalid", "spec.selectors[2].cel.expression:FieldValueInvalid", "spec.selectors[3].cel.expression:FieldValueInvalid", "spec.selectors[4].cel:FieldValueRequired"},
	}, {
		Name: "deviceclass bad config", Path: "/apis/resource.k8s.io/v1/deviceclasses",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"kinds-ext-dc2"},"spec":{"config":[{},{"opaque":{"driver":"Bad_Driver","parameters":[1]}},{"opaque":{"driver":"","parameters":null}}],"extendedResourceName":"kubernetes.io/foo"}}`,
		Code: 422, Reason: "Invalid",
		Message: `DeviceClass.resource.k8s.io "kinds-ext-dc2" is invalid: [spec.config[0].opaque: Required value, spec.config[1].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object, spec.config[2].opaque.parameters: Required value, spec.config[1].opaque.driver: Invalid value: "Bad_Driver": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.config[2].opaque.driver: Required value, spec.extendedResourceName: Invalid value: "kubernetes.io/foo": must not have "kubernetes.io/" domain]`,
		Causes:  []string{"spec.config[0].opaque:FieldValueRequired", "spec.config[1].opaque.parameters:FieldValueInvalid", "spec.config[2].opaque.parameters:FieldValueRequired", "spec.config[1].opaque.driver:FieldValueInvalid", "spec.config[2].opaque.driver:FieldValueRequired", "spec.extendedResourceName:FieldValueInvalid"},
	}, {
		Name: "claim bad requests", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"kinds-ext-claim1","namespace":"default"},"spec":{"devices":{"requests":[{"name":"Bad_Name"},{"exactly":{"deviceClassName":"a"},"firstAvailable":[{"deviceClassName":"a","name":"x"}],"name":"both"},{"exactly":{"allocationMode":"Some","deviceClassName":"","selectors":[{"cel":{"expression":"1"}}],"tolerations":[{"key":"bad key","operator":"Exists","value":"v"},{"effect":"Soon","operator":"Maybe"}]},"name":"ex"},{"exactly":{"allocationMode":"All","count":3,"deviceClassName":"Bad_Class"},"name":"ex"},{"firstAvailable":[{"count":-1,"deviceClassName":"c","name":"a"},{"deviceClassName":"c","name":"a"}],"name":"fa"}]}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaim.resource.k8s.io \"kinds-ext-claim1\" is invalid: [spec.devices.requests[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required, spec.devices.requests[1]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set, spec.devices.requests[2].exactly.deviceClassName: Required value, spec.devices.requests[2].exactly.selectors[0].cel.expression: Invalid value: \"1\": must evaluate to bool or the unknown type, not int, spec.devices.requests[2].exactly.tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`, spec.devices.requests[3].exactly.deviceClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.devices.requests[3].exactly.count: Invalid value: 3: must not be specified when allocationMode is 'All', spec.devices.requests[4].firstAvailable[0].count: Invalid value: -1: must be greater than zero, spec.devices.requests[3]: Duplicate value: {\"name\":\"ex\",\"exactly\":{\"deviceClassName\":\"Bad_Class\",\"allocationMode\":\"All\",\"count\":3}}, spec.devices.requests[2].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\", spec.devices.requests[2].exactly.tolerations[0].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.devices.requests[2].exactly.tolerations[1].operator: Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\", spec.devices.requests[2].exactly.tolerations[1].effect: Unsupported value: \"Soon\": supported values: \"NoExecute\", \"NoSchedule\", \"None\", spec.devices.requests[4].firstAvailable[1]: Duplicate value: {\"name\":\"a\",\"deviceClassName\":\"c\",\"allocationMode\":\"ExactCount\",\"count\":1}]",
		Causes:  []string{"spec.devices.requests[0].name:FieldValueInvalid", "spec.devices.requests[0]:FieldValueRequired", "spec.devices.requests[1]:FieldValueInvalid", "spec.devices.requests[2].exactly.deviceClassName:FieldValueRequired", "spec.devices.requests[2].exactly.selectors[0].cel.expression:FieldValueInvalid", "spec.devices.requests[2].exactly.tolerations[0].value:FieldValueInvalid", "spec.devices.requests[3].exactly.deviceClassName:FieldValueInvalid", "spec.devices.requests[3].exactly.count:FieldValueInvalid", "spec.devices.requests[4].firstAvailable[0].count:FieldValueInvalid", "spec.devices.requests[3]:FieldValueDuplicate", "spec.devices.requests[2].exactly.allocationMode:FieldValueNotSupported", "spec.devices.requests[2].exactly.tolerations[0].key:FieldValueInvalid", "spec.devices.requests[2].exactly.tolerations[1].operator:FieldValueNotSupported", "spec.devices.requests[2].exactly.tolerations[1].effect:FieldValueNotSupported", "spec.devices.requests[4].firstAvailable[1]:FieldValueDuplicate"},
	}, {
		Name: "claim bad constraints and config", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"kinds-ext-claim2","namespace":"default"},"spec":{"devices":{"config":[{"opaque":{"driver":"gpu.example.com","parameters":"str"},"requests":["gpu"]},{"requests":["missing"]}],"constraints":[{"matchAttribute":"model","requests":["gpu","nope","gpu","two/big","two/small","a/b/c"]},{}],"requests":[{"exactly":{"deviceClassName":"c"},"name":"gpu"},{"firstAvailable":[{"deviceClassName":"c","name":"big"}],"name":"two"}]}}}`,
		Code: 422, Reason: "Invalid",
		Message: `ResourceClaim.resource.k8s.io "kinds-ext-claim2" is invalid: [spec.devices.constraints[0].requests[1]: Invalid value: "nope": must be the name of a request in the claim or the name of a request and a subrequest separated by '/', spec.devices.constraints[0].requests[4]: Invalid value: "two/small": must be the name of a request in the claim or the name of a request and a subrequest separated by '/', spec.devices.constraints[0].requests[5]: Invalid value: "a/b/c": must be the name of a request in the claim or the name of a request and a subrequest separated by '/', spec.devices.constraints[1]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set, spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object, spec.devices.config[1].requests[0]: Invalid value: "missing": must be the name of a request in the claim or the name of a request and a subrequest separated by '/', spec.devices.config[1].opaque: Required value, spec.devices.constraints[0].requests[2]: Duplicate value: "gpu", spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash]`,
		Causes:  []string{"spec.devices.constraints[0].requests[1]:FieldValueInvalid", "spec.devices.constraints[0].requests[4]:FieldValueInvalid", "spec.devices.constraints[0].requests[5]:FieldValueInvalid", "spec.devices.constraints[1]:FieldValueRequired", "spec.devices.config[0].opaque.parameters:FieldValueInvalid", "spec.devices.config[1].requests[0]:FieldValueInvalid", "spec.devices.config[1].opaque:FieldValueRequired", "spec.devices.constraints[0].requests[2]:FieldValueDuplicate", "spec.devices.constraints[0].matchAttribute:FieldValueInvalid"},
	}, {
		Name: "template bad meta", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"kinds-ext-tmpl1","namespace":"default"},"spec":{"metadata":{"finalizers":["f"],"labels":{"bad key!":"a"},"name":"x","uid":"u"},"spec":{"devices":{"requests":[{"name":"r"}]}}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaimTemplate.resource.k8s.io \"kinds-ext-tmpl1\" is invalid: [spec.metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.metadata.name: Forbidden: cannot be set, spec.metadata.uID: Forbidden: cannot be set, spec.metadata.finalizers: Forbidden: cannot be set, spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required]",
		Causes:  []string{"spec.metadata.labels:FieldValueInvalid", "spec.metadata.name:FieldValueForbidden", "spec.metadata.uID:FieldValueForbidden", "spec.metadata.finalizers:FieldValueForbidden", "spec.spec.devices.requests[0]:FieldValueRequired"},
	}, {
		Name: "slice bad", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kinds-ext-slice1"},"spec":{"allNodes":false,"devices":[{"attributes":{"bad name":{"bool":true},"example.com/ok":{"version":"1.2"},"two":{"bool":false,"int":1}},"capacity":{"mem":{"requestPolicy":{"default":1},"value":"1Gi"}},"name":"Dev_0","nodeName":"n","taints":[{"effect":"Soon","key":""},{"effect":"NoSchedule","key":"ok","value":"bad value!"}]},{"name":"Dev_0"}],"driver":"Bad_Driver","nodeName":"","pool":{"generation":-1,"name":"Pool/A","resourceSliceCount":0}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceSlice.resource.k8s.io \"kinds-ext-slice1\" is invalid: [spec.driver: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.pool.name: Invalid value: \"Pool\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.pool.name: Invalid value: \"A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero, spec.pool.generation: Invalid value: -1: must be greater than or equal to zero, spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string, spec.allNodes: Invalid value: false: must be either unset or set to true, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, spec.devices[0].name: Invalid value: \"Dev_0\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.devices[0].attributes: Invalid value: \"bad name\": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*'), spec.devices[0].attributes[example.com/ok].version: Invalid value: \"1.2\": must be a string compatible with semver.org spec 2.0.0, spec.devices[0].capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true, spec.devices[0].taints[0].key: Invalid value: \"\": name part must be non-empty, spec.devices[0].taints[0].key: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.devices[0].taints[1].value: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec, spec.devices[1].name: Invalid value: \"Dev_0\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.devices[1]: Duplicate value: \"Dev_0\", spec.devices[0].attributes[two]: Invalid value: \"{int, bool}\": must specify exactly one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`, spec.devices[0].taints[0].effect: Unsupported value: \"Soon\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"]",
		Causes:  []string{"spec.driver:FieldValueInvalid", "spec.pool.name:FieldValueInvalid", "spec.pool.name:FieldValueInvalid", "spec.pool.resourceSliceCount:FieldValueInvalid", "spec.pool.generation:FieldValueInvalid", "spec.nodeName:FieldValueInvalid", "spec.allNodes:FieldValueInvalid", "spec:FieldValueRequired", "spec.devices[0].name:FieldValueInvalid", "spec.devices[0].attributes:FieldValueInvalid", "spec.devices[0].attributes[example.com/ok].version:FieldValueInvalid", "spec.devices[0].capacity[mem].requestPolicy:FieldValueForbidden", "spec.devices[0].taints[0].key:FieldValueInvalid", "spec.devices[0].taints[0].key:FieldValueInvalid", "spec.devices[0].taints[1].value:FieldValueInvalid", "spec.devices[0]:FieldValueInvalid", "spec.devices[1].name:FieldValueInvalid", "spec.devices[1]:FieldValueDuplicate", "spec.devices[0].attributes[two]:FieldValueInvalid", "spec.devices[0].taints[0].effect:FieldValueNotSupported"},
	}, {
		Name: "slice multiple nodes", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kinds-ext-slice2"},"spec":{"allNodes":true,"devices":[{"name":"d"}],"driver":"d.example.com","nodeName":"n","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"In"}]},{}]},"pool":{"name":"p","resourceSliceCount":1},"sharedCounters":[{"name":"c"}]}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceSlice.resource.k8s.io \"kinds-ext-slice2\" is invalid: [spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.nodeSelector.nodeSelectorTerms: Invalid value: [{\"MatchExpressions\":[{\"Key\":\"a\",\"Operator\":\"In\",\"Values\":null}],\"MatchFields\":null},{\"MatchExpressions\":null,\"MatchFields\":null}]: must have exactly one node selector term, spec: Invalid value: \"{`nodeName`, `nodeSelector`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set, spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed, spec.sharedCounters[0].counters: Required value]",
		Causes:  []string{"spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values:FieldValueRequired", "spec.nodeSelector.nodeSelectorTerms:FieldValueInvalid", "spec:FieldValueInvalid", "spec:FieldValueInvalid", "spec.sharedCounters[0].counters:FieldValueRequired"},
	}, {
		Name: "slice no node", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kinds-ext-slice3"},"spec":{"driver":"d.example.com","pool":{"name":"p","resourceSliceCount":1}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceSlice.resource.k8s.io \"kinds-ext-slice3\" is invalid: spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
		Causes:  []string{"spec:FieldValueRequired"},
	}, {
		Name: "taint rule bad", Path: "/apis/resource.k8s.io/v1/devicetaintrules",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"kinds-ext-dtr1"},"spec":{"deviceSelector":{"device":"Bad_Dev","driver":"Bad_Driver","pool":""},"taint":{"effect":"Soon","key":"bad key","value":"bad value!"}}}`,
		Code: 422, Reason: "Invalid",
		Message: `DeviceTaintRule.resource.k8s.io "kinds-ext-dtr1" is invalid: [spec.deviceSelector.driver: Invalid value: "Bad_Driver": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.deviceSelector.pool: Required value, spec.deviceSelector.device: Invalid value: "Bad_Dev": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.taint.key: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.taint.value: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.taint.effect: Unsupported value: "Soon": supported values: "NoExecute", "NoSchedule", "None"]`,
		Causes:  []string{"spec.deviceSelector.driver:FieldValueInvalid", "spec.deviceSelector.pool:FieldValueRequired", "spec.deviceSelector.device:FieldValueInvalid", "spec.taint.key:FieldValueInvalid", "spec.taint.value:FieldValueInvalid", "spec.taint.effect:FieldValueNotSupported"},
	}, {
		Name: "taint rule empty", Path: "/apis/resource.k8s.io/v1/devicetaintrules",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"kinds-ext-dtr2"},"spec":{}}`,
		Code: 422, Reason: "Invalid",
		Message: `DeviceTaintRule.resource.k8s.io "kinds-ext-dtr2" is invalid: [spec.taint.key: Invalid value: "": name part must be non-empty, spec.taint.key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.taint.effect: Required value]`,
		Causes:  []string{"spec.taint.key:FieldValueInvalid", "spec.taint.key:FieldValueInvalid", "spec.taint.effect:FieldValueRequired"},
	}, {
		Name: "slice per-device nodes", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kinds-ext-slice5"},"spec":{"devices":[{"allNodes":true,"name":"a","nodeName":"n1"},{"allNodes":false,"name":"b"}],"driver":"d.example.com","perDeviceNodeSelection":true,"pool":{"name":"p","resourceSliceCount":1}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceSlice.resource.k8s.io \"kinds-ext-slice5\" is invalid: [spec.devices[0]: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec, spec.devices[1].allNodes: Invalid value: false: must be either unset or set to true, spec.devices[1]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec]",
		Causes:  []string{"spec.devices[0]:FieldValueInvalid", "spec.devices[1].allNodes:FieldValueInvalid", "spec.devices[1]:FieldValueRequired"},
	}, {
		Name: "admin access in unlabeled namespace", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"kinds-ext-admin","namespace":"default"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"c","adminAccess":true}}]}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaim.resource.k8s.io \"kinds-ext-admin\" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace",
		Causes:  []string{"spec.devices.requests[0].adminAccess:FieldValueForbidden"},
	}, {
		Name: "admin access template", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"kinds-ext-admin","namespace":"default"},"spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"c","adminAccess":true}}]}}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaimTemplate.resource.k8s.io \"kinds-ext-admin\" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace",
		Causes:  []string{"spec.devices.requests[0].adminAccess:FieldValueForbidden"},
	}, {
		Name: "admin access plus invalid", Path: "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"kinds-ext-admin2","namespace":"default"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"","adminAccess":true}}]}}}`,
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaim.resource.k8s.io \"kinds-ext-admin2\" is invalid: [spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace, spec.devices.requests[0].exactly.deviceClassName: Required value]",
		Causes:  []string{"spec.devices.requests[0].adminAccess:FieldValueForbidden", "spec.devices.requests[0].exactly.deviceClassName:FieldValueRequired"},
	}, {
		Name: "deviceclass bad name", Path: "/apis/resource.k8s.io/v1/deviceclasses",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"labels":{"bad key!":"x"},"name":"Bad_Name"},"spec":{"selectors":[{"cel":{"expression":"1"}}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `DeviceClass.resource.k8s.io "Bad_Name" is invalid: [metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int, metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`,
		Causes:  []string{"metadata.labels:FieldValueInvalid", "spec.selectors[0].cel.expression:FieldValueInvalid", "metadata.name:FieldValueInvalid"},
	}, {
		Name: "slice binding conditions", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kx-bind"},"spec":{"driver":"d.example.com","pool":{"name":"p","resourceSliceCount":1},"allNodes":true,"devices":[{"name":"a","bindingConditions":["x","x","bad key!"],"bindingFailureConditions":["x"]},{"name":"b","bindingFailureConditions":["y"]},{"name":"c","bindingConditions":["a","b","c","d","e"],"bindingFailureConditions":["f"]}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `ResourceSlice.resource.k8s.io "kx-bind" is invalid: [spec.devices[0].bindingConditions[2]: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.devices[0].bindingConditions[1]: Duplicate value: "x", spec.devices[0].bindingFailureConditions[0]: Invalid value: "x": bindingFailureConditions must not overlap with bindingConditions, spec.devices[1].bindingConditions: Invalid value: null: bindingConditions are required to use bindingFailureConditions, spec.devices[2].bindingConditions: Too many: 5: must have at most 4 items]`,
		Causes:  []string{"spec.devices[0].bindingConditions[2]:FieldValueInvalid", "spec.devices[0].bindingConditions[1]:FieldValueDuplicate", "spec.devices[0].bindingFailureConditions[0]:FieldValueInvalid", "spec.devices[1].bindingConditions:FieldValueInvalid", "spec.devices[2].bindingConditions:FieldValueTooMany"},
	}, {
		Name: "slice capacity request policy", Path: "/apis/resource.k8s.io/v1/resourceslices",
		Body: `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"kx-cap"},"spec":{"driver":"d.example.com","pool":{"name":"p","resourceSliceCount":1},"allNodes":true,"devices":[{"name":"a","capacity":{"mem":{"value":"1Gi","requestPolicy":{"default":1}}}},{"name":"b","allowMultipleAllocations":true,"capacity":{"mem":{"value":"1Gi","requestPolicy":{"default":1}}}}]}}`,
		Code: 422, Reason: "Invalid",
		Message: `ResourceSlice.resource.k8s.io "kx-cap" is invalid: spec.devices[0].capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true`,
		Causes:  []string{"spec.devices[0].capacity[mem].requestPolicy:FieldValueForbidden"},
	},
}

func TestResourceKindsOverHTTP(t *testing.T) {
	s := apitest.Start(t)
	s.Reject(t, "", rejections)

	// Valid objects, stored with kube-apiserver's defaults (timeAdded is
	// the server's time: checked apart).
	apitest.ExpectStored(t, s.Create(t, base+"deviceclasses", `{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu},
		spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'a100'"}}], config: [{opaque: {driver: gpu.example.com, parameters: {a: 1}}}]}}`),
		`{"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "gpu", "generation": 1}, "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'a100'"}}], "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}}`)
	apitest.ExpectStored(t, s.Create(t, claims, `{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: claim},
		spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}, {name: two, firstAvailable: [{name: big, deviceClassName: gpu, count: 2}, {name: all, deviceClassName: gpu, allocationMode: All}]}]}}}`),
		`{"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "claim", "namespace": "default"}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}, {"name": "two", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}, {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}]}]}}, "status": {}}`)
	apitest.ExpectStored(t, s.Create(t, base+"namespaces/default/resourceclaimtemplates", `{apiVersion: resource.k8s.io/v1, kind: ResourceClaimTemplate, metadata: {name: tmpl},
		spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, allocationMode: ExactCount, tolerations: [{key: a, operator: Exists}]}}]}}}}`),
		`{"kind": "ResourceClaimTemplate", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "tmpl", "namespace": "default"}, "spec": {"metadata": {}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1, "tolerations": [{"key": "a", "operator": "Exists"}]}}]}}}}`)
	slice := s.Create(t, base+"resourceslices", `{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: slice},
		spec: {driver: gpu.example.com, pool: {name: pool-a, generation: 1, resourceSliceCount: 1}, nodeName: node-1,
		devices: [{name: gpu-0, attributes: {model: {string: a100}, index: {int: 0}}, capacity: {memory: {value: 40Gi}}, taints: [{key: a, value: b, effect: NoSchedule}]}]}}`)
	taint := slice["spec"].(map[string]any)["devices"].([]any)[0].(map[string]any)["taints"].([]any)[0].(map[string]any)
	if taint["timeAdded"] != slice["metadata"].(map[string]any)["creationTimestamp"] {
		t.Errorf("slice taint added at %v, created %v", taint["timeAdded"], slice["metadata"].(map[string]any)["creationTimestamp"])
	}
	delete(taint, "timeAdded")
	apitest.ExpectStored(t, slice, `{"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "slice", "generation": 1}, "spec": {"driver": "gpu.example.com", "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1}, "nodeName": "node-1", "devices": [{"name": "gpu-0", "attributes": {"index": {"int": 0}, "model": {"string": "a100"}}, "capacity": {"memory": {"value": "40Gi"}}, "taints": [{"key": "a", "value": "b", "effect": "NoSchedule"}]}]}}`)
	rule := s.Create(t, base+"devicetaintrules", `{apiVersion: resource.k8s.io/v1, kind: DeviceTaintRule, metadata: {name: rule}, spec: {deviceSelector: {driver: gpu.example.com, pool: pool-a, device: gpu-0}, taint: {key: example.com/broken, effect: NoExecute}}}`)
	added := rule["spec"].(map[string]any)["taint"].(map[string]any)["timeAdded"]
	if added == nil {
		t.Errorf("rule taint without timeAdded: %v", rule)
	}

	s.Reject(t, "", []apitest.Rejection{{
		Name: "claim spec is immutable", Method: "PUT", Path: claims + "/claim",
		Mutate: func(o map[string]any) {
			o["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)[0].(map[string]any)["exactly"].(map[string]any)["count"] = 2
		},
		Code: 422, Reason: "Invalid",
		Message: `ResourceClaim.resource.k8s.io "claim" is invalid: spec: Invalid value: null: field is immutable`,
		Causes:  []string{"spec:FieldValueInvalid"},
	}, {
		Name: "template spec is immutable", Method: "PUT", Path: base + "namespaces/default/resourceclaimtemplates/tmpl",
		Mutate: func(o map[string]any) {
			o["spec"].(map[string]any)["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)[0].(map[string]any)["exactly"].(map[string]any)["count"] = 2
		},
		Code: 422, Reason: "Invalid",
		Message: `ResourceClaimTemplate.resource.k8s.io "tmpl" is invalid: spec: Invalid value: {"Spec":{"Devices":{"Requests":[{"Name":"gpu","Exactly":{"DeviceClassName":"gpu","Selectors":null,"AllocationMode":"ExactCount","Count":2,"AdminAccess":null,"Tolerations":[{"Key":"a","Operator":"Exists","Value":"","Effect":"","TolerationSeconds":null}],"Capacity":null,"DerivedAttributes":null},"FirstAvailable":null}],"Constraints":null,"Config":null}}}: field is immutable`,
		Causes:  []string{"spec:FieldValueInvalid"},
	}, {
		Name: "claim status: reserved without allocation", Method: "PUT", Path: claims + "/claim/status",
		Mutate: func(o map[string]any) {
			o["status"] = map[string]any{"reservedFor": []any{map[string]any{"resource": "pods", "name": "p", "uid": "u1"}}}
		},
		Code: 422, Reason: "Invalid",
		Message: "ResourceClaim.resource.k8s.io \"claim\" is invalid: status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
		Causes:  []string{"status.reservedFor:FieldValueForbidden"},
	}, {
		Name: "slice: driver, pool and node are immutable", Method: "PUT", Path: base + "resourceslices/slice",
		Mutate: func(o map[string]any) {
			spec := o["spec"].(map[string]any)
			spec["driver"], spec["nodeName"] = "other.example.com", "node-2"
			spec["pool"].(map[string]any)["name"] = "pool-b"
		},
		Code: 422, Reason: "Invalid",
		Message: `ResourceSlice.resource.k8s.io "slice" is invalid: [spec.pool.name: Invalid value: "pool-b": field is immutable, spec.driver: Invalid value: "other.example.com": field is immutable, spec.nodeName: Invalid value: "node-2": field is immutable]`,
		Causes:  []string{"spec.pool.name:FieldValueInvalid", "spec.driver:FieldValueInvalid", "spec.nodeName:FieldValueInvalid"},
	}})

	// An allocation through the status subresource; the printer shows it.
	c := s.GetMap(t, claims+"/claim")
	c["status"] = map[string]any{
		"allocation":  map[string]any{"devices": map[string]any{"results": []any{map[string]any{"request": "gpu", "driver": "gpu.example.com", "pool": "pool-a", "device": "gpu-0"}}}},
		"reservedFor": []any{map[string]any{"resource": "pods", "name": "p", "uid": "u1"}},
	}
	if code, out := s.Write(t, "PUT", claims+"/claim/status", c); code != http.StatusOK {
		t.Fatalf("claim status: %d %v", code, out)
	}
	// A taint rule whose effect changes is stamped again; its generation
	// moves.
	r := s.GetMap(t, base+"devicetaintrules/rule")
	r["spec"].(map[string]any)["taint"].(map[string]any)["effect"] = "NoSchedule"
	r["spec"].(map[string]any)["taint"].(map[string]any)["timeAdded"] = "2020-01-01T00:00:00Z"
	code, out := s.Write(t, "PUT", base+"devicetaintrules/rule", r)
	if code != http.StatusOK || out["metadata"].(map[string]any)["generation"] != 2.0 ||
		out["spec"].(map[string]any)["taint"].(map[string]any)["timeAdded"] != "2020-01-01T00:00:00Z" {
		t.Errorf("rule update: %d %v", code, out)
	}

	for _, c := range []struct {
		path string
		cols []string
		row  []any
	}{
		{base + "deviceclasses", []string{"Name", "Age"}, []any{"gpu"}},
		{claims, []string{"Name", "State", "Age"}, []any{"claim", "allocated,reserved"}},
		{base + "namespaces/default/resourceclaimtemplates", []string{"Name", "Age"}, []any{"tmpl"}},
		{base + "resourceslices", []string{"Name", "Node", "Driver", "Pool", "Age"}, []any{"slice", "node-1", "gpu.example.com", "pool-a"}},
		{base + "devicetaintrules", []string{"Name", "Key", "Value", "Effect", "TimeAdded", "Age"}, []any{"rule", "example.com/broken", "", "NoSchedule"}},
	} {
		cols, rows := s.Table(t, c.path)
		if !reflect.DeepEqual(cols, c.cols) || len(rows) != 1 || !reflect.DeepEqual(rows[0][:len(c.row)], c.row) {
			t.Errorf("%s: columns %q rows %v", c.path, cols, rows)
		}
	}

	// Admin access is granted in a namespace labeled for it.
	s.Create(t, "/api/v1/namespaces", `{apiVersion: v1, kind: Namespace, metadata: {name: admins, labels: {resource.kubernetes.io/admin-access: "true"}}}`)
	s.Create(t, base+"namespaces/admins/resourceclaims", `{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: admin},
		spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, adminAccess: true}}]}}}`)

	// Field selectors: slices by node, driver and pool; anything else is
	// refused as kube-apiserver refuses it.
	for _, c := range []struct {
		path, sel string
		code      int
		names     []string
		msg       string
	}{
		{base + "resourceslices", "spec.nodeName=node-1,spec.driver=gpu.example.com,spec.pool.name=pool-a", 200, []string{"slice"}, ""},
		{base + "resourceslices", "spec.nodeName=node-2", 200, []string{}, ""},
		{base + "resourceslices", "metadata.namespace=x", 400, nil, "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: metadata.namespace"},
		{base + "deviceclasses", "metadata.namespace=", 200, []string{"gpu"}, ""},
		{base + "deviceclasses", "spec.foo=x", 400, nil, `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{claims, "metadata.name=claim", 200, []string{"claim"}, ""},
	} {
		code, names, msg := s.Select(t, c.path, c.sel)
		if code != c.code || msg != c.msg || (c.names != nil && !reflect.DeepEqual(names, c.names)) {
			t.Errorf("%s?fieldSelector=%s: %d %v %q, want %d %v %q", c.path, c.sel, code, names, msg, c.code, c.names, c.msg)
		}
	}
}
