package openapi_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// crScale and crStatus mark a custom resource as having the scale and
// status subresources; the OpenAPI package only checks them for nil.
type crScale struct{}

func (crScale) Replicas(runtime.Object) (int32, int32, string, error) { return 0, 0, "", nil }
func (crScale) SetReplicas(runtime.Object, int32) error               { return nil }

type crStatus struct{}

func (crStatus) PrepareForUpdate(obj, old runtime.Object)               {}
func (crStatus) ValidateUpdate(obj, old runtime.Object) field.ErrorList { return nil }

// cronTabV1Schema is the v1 schema of the CronTab custom resource, in the
// form the API server publishes it (metadata a one-element allOf of the
// ObjectMeta ref). It has what Swagger 2.0 cannot hold: a nullable
// required field, an int-or-string field with anyOf, a default, and an
// object preserving unknown fields that lists properties; and a key that
// is no OpenAPI ($comment).
const cronTabV1Schema = `{
  "type": "object",
  "description": "CronTab runs a command on a schedule.",
  "$comment": "not an OpenAPI keyword",
  "properties": {
    "apiVersion": {"type": "string", "description": "APIVersion of the object."},
    "kind": {"type": "string", "description": "Kind of the object."},
    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "description": "Standard object's metadata."},
    "spec": {
      "type": "object",
      "description": "CronTabSpec is the desired state of a CronTab.",
      "required": ["cronSpec", "image"],
      "properties": {
        "cronSpec": {"type": "string", "description": "The cron schedule of the job, e.g. '*/5 * * * *'."},
        "replicas": {"type": "integer", "format": "int32", "minimum": 1, "default": 1, "description": "How many copies of the job run at once."},
        "image": {"type": "string", "nullable": true, "description": "The container image; null picks the default image."},
        "timeout": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}], "description": "Seconds, or a duration string."},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"note": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
      }
    },
    "status": {
      "type": "object",
      "description": "CronTabStatus is the observed state of a CronTab.",
      "properties": {
        "replicas": {"type": "integer", "format": "int32", "description": "Copies of the job running."},
        "labelSelector": {"type": "string", "description": "Selector of the job's pods."}
      }
    }
  }
}`

// cronTabV2Schema is the v2 schema: a schemaless version (unknown fields
// preserved) with the properties every kind has; metadata is a bare $ref.
const cronTabV2Schema = `{
  "type": "object",
  "x-kubernetes-preserve-unknown-fields": true,
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
  }
}`

func mustSchema(t testing.TB, text string) *spec.Schema {
	t.Helper()
	s := &spec.Schema{}
	if err := json.Unmarshal([]byte(text), s); err != nil {
		t.Fatalf("test schema: %v", err)
	}
	return s
}

// cronTab returns a custom resource descriptor of crontabs in
// stable.example.com/<version>, namespaced, with status and scale.
func cronTab(t testing.TB, version, schemaText string) *registry.Resource {
	return &registry.Resource{
		Group: "stable.example.com", Version: version, Resource: "crontabs",
		Kind: "CronTab", ListKind: "CronTabList", Singular: "crontab", ShortNames: []string{"ct"},
		Namespaced: true,
		New:        func() runtime.Object { return &unstructured.Unstructured{} },
		NewList:    func() runtime.Object { return &unstructured.UnstructuredList{} },
		Status:     crStatus{}, Scale: crScale{},
		Unstructured: true,
		Schema:       mustSchema(t, schemaText),
		ModelName:    "com.example.stable." + version + ".CronTab",
	}
}

// withCronTabs returns the discoverytest resources plus CronTab v1 and v2.
func withCronTabs(t testing.TB) []*registry.Resource {
	return append(discoverytest.Resources(), cronTab(t, "v1", cronTabV1Schema), cronTab(t, "v2", cronTabV2Schema))
}

// manyCustomResources returns n cluster-scoped custom resources in n/2
// groups (two versions each), all with the CronTab v1 schema.
func manyCustomResources(t testing.TB, n int) []*registry.Resource {
	var out []*registry.Resource
	for i := 0; i < n; i++ {
		r := cronTab(t, fmt.Sprintf("v%d", i%2+1), cronTabV1Schema)
		r.Group = fmt.Sprintf("g%d.example.com", i/2)
		r.Resource, r.Kind, r.ListKind = fmt.Sprintf("widgets%d", i), fmt.Sprintf("Widget%d", i), fmt.Sprintf("Widget%dList", i)
		r.ModelName = fmt.Sprintf("com.example.g%d.%s.%s", i/2, r.Version, r.Kind)
		r.Namespaced = false
		out = append(out, r)
	}
	return out
}
