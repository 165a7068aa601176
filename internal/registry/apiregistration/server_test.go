package apiregistration_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

const base = "/apis/apiregistration.k8s.io/v1/apiservices"

// The answers below are kube-apiserver v1.37.2's to the same requests.
var rejections = []apitest.Rejection{
	{
		Name: "apiservice bad name, group/version, priorities, local with cabundle", Path: "/apis/apiregistration.k8s.io/v1/apiservices",
		Body: `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1.kinds-ext.example.com"},"spec":{"caBundle":"YWJj","group":"Bad_Group","groupPriorityMinimum":0,"insecureSkipTLSVerify":true,"version":"V1","versionPriority":1001}}`,
		Code: 422, Reason: "Invalid",
		Message: "APIService.apiregistration.k8s.io \"v1.kinds-ext.example.com\" is invalid: [metadata.name: Invalid value: \"v1.kinds-ext.example.com\": must be `spec.version+\".\"+spec.group`: \"V1.Bad_Group\", spec.group: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, spec.versionPriority: Invalid value: 1001: must be positive and less than 1000, spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle, spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify]",
		Causes:  []string{"metadata.name:FieldValueInvalid", "spec.group:FieldValueInvalid", "spec.version:FieldValueInvalid", "spec.groupPriorityMinimum:FieldValueInvalid", "spec.versionPriority:FieldValueInvalid", "spec.caBundle:FieldValueInvalid", "spec.insecureSkipTLSVerify:FieldValueInvalid"},
	}, {
		Name: "apiservice empty group non-v1", Path: "/apis/apiregistration.k8s.io/v1/apiservices",
		Body: `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v2."},"spec":{"groupPriorityMinimum":100,"version":"v2","versionPriority":10}}`,
		Code: 422, Reason: "Invalid",
		Message: `APIService.apiregistration.k8s.io "v2." is invalid: spec.group: Required value: only v1 may have an empty group and it better be legacy kube`,
		Causes:  []string{"spec.group:FieldValueRequired"},
	}, {
		Name: "apiservice service bad", Path: "/apis/apiregistration.k8s.io/v1/apiservices",
		Body: `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1.kinds-ext.example.com"},"spec":{"caBundle":"YWJj","group":"kinds-ext.example.com","groupPriorityMinimum":100,"insecureSkipTLSVerify":true,"service":{"port":0},"version":"v1","versionPriority":10}}`,
		Code: 422, Reason: "Invalid",
		Message: `APIService.apiregistration.k8s.io "v1.kinds-ext.example.com" is invalid: [spec.service.namespace: Required value, spec.service.name: Required value, spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive, spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present]`,
		Causes:  []string{"spec.service.namespace:FieldValueRequired", "spec.service.name:FieldValueRequired", "spec.service.port:FieldValueInvalid", "spec.insecureSkipTLSVerify:FieldValueInvalid"},
	}, {
		Name: "apiservice name with slash", Path: "/apis/apiregistration.k8s.io/v1/apiservices",
		Body: `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"a%b"},"spec":{"group":"kinds-ext.example.com","groupPriorityMinimum":100,"version":"v1","versionPriority":10}}`,
		Code: 422, Reason: "Invalid",
		Message: `APIService.apiregistration.k8s.io "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain '%'`,
		Causes:  []string{"metadata.name:FieldValueInvalid"},
	},
}

func TestAPIServicesOverHTTP(t *testing.T) {
	s := apitest.Start(t)

	// The local APIServices of the served group-versions exist from the
	// start, available.
	cols, rows := s.Table(t, base)
	if !reflect.DeepEqual(cols, []string{"Name", "Service", "Available", "Age"}) {
		t.Errorf("columns %q", cols)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r[0].(string))
		if r[1] != "Local" || r[2] != "True" {
			t.Errorf("row %v: want Local, True", r)
		}
	}
	for _, want := range []string{"v1.", "v1.apps", "v1.admissionregistration.k8s.io", "v1.apiextensions.k8s.io", "v1.coordination.k8s.io", "v1.storage.k8s.io"} {
		if !slices.Contains(names, want) {
			t.Errorf("no local APIService %s among %v", want, names)
		}
	}
	if slices.Contains(names, "v1.apiregistration.k8s.io") {
		t.Errorf("an APIService for apiregistration.k8s.io itself: %v", names)
	}
	apitest.ExpectStored(t, withoutStatus(s.GetMap(t, base+"/v1.apps")), `{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": {"labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}, "name": "v1.apps"},
		"spec": {"group": "apps", "groupPriorityMinimum": 17800, "version": "v1", "versionPriority": 15}}`)

	s.Reject(t, base, rejections)

	// A service-backed APIService is stored with its port defaulted and no
	// status; a local one is available from its creation.
	apitest.ExpectStored(t, s.Create(t, base, `{apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: v1.example.com},
		spec: {group: example.com, version: v1, groupPriorityMinimum: 100, versionPriority: 10, service: {name: s, namespace: default}, insecureSkipTLSVerify: true}}`),
		`{"kind": "APIService", "apiVersion": "apiregistration.k8s.io/v1", "metadata": {"name": "v1.example.com"}, "spec": {"service": {"namespace": "default", "name": "s", "port": 443}, "group": "example.com", "version": "v1", "insecureSkipTLSVerify": true, "groupPriorityMinimum": 100, "versionPriority": 10}, "status": {}}`)
	local := s.Create(t, base, `{apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: v1.local.example.com},
		spec: {group: local.example.com, version: v1, groupPriorityMinimum: 100, versionPriority: 10}, status: {conditions: [{type: Available, status: "False", reason: Nope}]}}`)
	cond := local["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	created := local["metadata"].(map[string]any)["creationTimestamp"]
	if cond["type"] != "Available" || cond["status"] != "True" || cond["reason"] != "Local" ||
		cond["message"] != "Local APIServices are always available" || cond["lastTransitionTime"] != created {
		t.Errorf("local condition %v (created %v)", cond, created)
	}

	// A status write cannot make a local APIService unavailable.
	local["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "Down"}}}
	code, out := s.Write(t, "PUT", base+"/v1.local.example.com/status", local)
	if code != http.StatusOK {
		t.Fatalf("status update: %d %v", code, out)
	}
	if c := out["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any); c["status"] != "True" || c["reason"] != "Local" {
		t.Errorf("local status after writing False: %v", c)
	}
	// A service-backed one shows what its status says.
	svc := s.GetMap(t, base+"/v1.example.com")
	svc["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "ServiceNotFound", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if code, out := s.Write(t, "PUT", base+"/v1.example.com/status", svc); code != http.StatusOK {
		t.Fatalf("status update: %d %v", code, out)
	}
	svc = s.GetMap(t, base+"/v1.example.com")
	svc["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "Maybe"}}}
	if code, out := s.Write(t, "PUT", base+"/v1.example.com/status", svc); code != http.StatusUnprocessableEntity {
		t.Errorf("status Maybe: %d %v", code, out)
	}
	_, rows = s.Table(t, base+"/v1.example.com")
	if len(rows) != 1 || rows[0][1] != "default/s" || rows[0][2] != "False (ServiceNotFound)" {
		t.Errorf("rows %v", rows)
	}
}

func withoutStatus(m map[string]any) map[string]any {
	delete(m, "status")
	return m
}
