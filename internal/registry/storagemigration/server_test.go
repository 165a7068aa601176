package storagemigration_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

const base = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"

// The answers below are kube-apiserver v1.37.2's to the same requests.
func TestStorageVersionMigrationsOverHTTP(t *testing.T) {
	s := apitest.Start(t)
	apitest.ExpectStored(t, s.Create(t, base, `{apiVersion: storagemigration.k8s.io/v1, kind: StorageVersionMigration, metadata: {name: svm},
		spec: {resource: {group: example.com, resource: widgets}}, status: {resourceVersion: "5"}}`),
		`{"kind": "StorageVersionMigration", "apiVersion": "storagemigration.k8s.io/v1", "metadata": {"name": "svm"}, "spec": {"resource": {"group": "example.com", "resource": "widgets"}}, "status": {}}`)
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": "x", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	s.Reject(t, "", []apitest.Rejection{
		{
			Name: "svm empty", Path: "/apis/storagemigration.k8s.io/v1/storageversionmigrations",
			Body: `{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"kinds-ext-svm-bad1"},"spec":{}}`,
			Code: 422, Reason: "Invalid",
			Message: `StorageVersionMigration.storagemigration.k8s.io "kinds-ext-svm-bad1" is invalid: spec.resource.resource: Required value: resource is required to be set`,
			Causes:  []string{"spec.resource.resource:FieldValueRequired"},
		}, {
			Name: "svm bad", Path: "/apis/storagemigration.k8s.io/v1/storageversionmigrations",
			Body: `{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"kinds-ext-svm-bad2"},"spec":{"resource":{"group":"Bad_Group","resource":"Widgets"}}}`,
			Code: 422, Reason: "Invalid",
			Message: `StorageVersionMigration.storagemigration.k8s.io "kinds-ext-svm-bad2" is invalid: [spec.resource.resource: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.resource.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`,
			Causes:  []string{"spec.resource.resource:FieldValueInvalid", "spec.resource.group:FieldValueInvalid"},
		}, {
			Name: "spec is immutable", Method: "PUT", Path: base + "/svm",
			Mutate: func(o map[string]any) { o["spec"].(map[string]any)["resource"].(map[string]any)["resource"] = "others" },
			Code:   422, Reason: "Invalid",
			Message: `StorageVersionMigration.storagemigration.k8s.io "svm" is invalid: spec: Invalid value: {"Resource":{"group":"example.com","resource":"others"}}: field is immutable`,
			Causes:  []string{"spec:FieldValueInvalid"},
		}, {
			Name: "status: bad resourceVersion, succeeded and failed", Method: "PUT", Path: base + "/svm/status",
			Mutate: func(o map[string]any) {
				o["status"] = map[string]any{"resourceVersion": "abc", "conditions": []any{cond("Succeeded"), cond("Failed")}}
			},
			Code: 422, Reason: "Invalid",
			Message: `StorageVersionMigration.storagemigration.k8s.io "svm" is invalid: [status.resourceVersion: Invalid value: "abc": resource version is not well formed: abc, status.conditions: Invalid value: [{"type":"Succeeded","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"x","message":""},{"type":"Failed","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"x","message":""}]: Both success and failed conditions cannot be true at the same time]`,
			Causes:  []string{"status.resourceVersion:FieldValueInvalid", "status.conditions:FieldValueInvalid"},
		}})

	// A migration succeeds for good, and its resourceVersion stays.
	m := s.GetMap(t, base+"/svm")
	m["status"] = map[string]any{"resourceVersion": "7", "conditions": []any{cond("Running")}}
	if code, out := s.Write(t, "PUT", base+"/svm/status", m); code != http.StatusOK {
		t.Fatalf("status: %d %v", code, out)
	}
	if _, rows := s.Table(t, base); len(rows) != 1 || !reflect.DeepEqual(rows[0], []any{"svm", "widgets.example.com", "Running"}) {
		t.Errorf("rows %v", rows)
	}
	m = s.GetMap(t, base+"/svm")
	m["status"].(map[string]any)["conditions"] = []any{cond("Succeeded")}
	if code, out := s.Write(t, "PUT", base+"/svm/status", m); code != http.StatusOK {
		t.Fatalf("status: %d %v", code, out)
	}
	s.Reject(t, "", []apitest.Rejection{{
		Name: "status: success withdrawn, resourceVersion changed", Method: "PUT", Path: base + "/svm/status",
		Mutate: func(o map[string]any) { o["status"] = map[string]any{"resourceVersion": "8"} },
		Code:   422, Reason: "Invalid",
		Message: `StorageVersionMigration.storagemigration.k8s.io "svm" is invalid: [status.resourceVersion: Invalid value: "8": field is immutable, status.conditions: Invalid value: null: Success condition cannot be set to false once it is true]`,
		Causes:  []string{"status.resourceVersion:FieldValueInvalid", "status.conditions:FieldValueInvalid"},
	}})
}
