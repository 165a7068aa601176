package crdschema

import (
	"encoding/json"
	"testing"
)

const openAPISchema = `
type: object
properties:
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, description: the image}
      port: {x-kubernetes-int-or-string: true}
      note: {type: string, nullable: true}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}}}
      template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
`

// jsonOf renders a value as generic JSON for assertions on the wire form.
func jsonOf(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func at(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func TestOpenAPIV3(t *testing.T) {
	s := compile(t, openAPISchema)
	doc := jsonOf(t, s.OpenAPI("#/components/schemas/"))
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"properties", "metadata", "$ref"}, "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{[]string{"properties", "apiVersion", "type"}, "string"},
		{[]string{"properties", "kind", "type"}, "string"},
		{[]string{"properties", "spec", "properties", "image", "description"}, "the image"},
		{[]string{"properties", "spec", "properties", "port", "x-kubernetes-int-or-string"}, true},
		{[]string{"properties", "spec", "properties", "note", "nullable"}, true},
		{[]string{"properties", "spec", "properties", "ports", "x-kubernetes-list-type"}, "map"},
		{[]string{"properties", "spec", "properties", "template", "x-kubernetes-embedded-resource"}, true},
		{[]string{"properties", "spec", "properties", "template", "properties", "metadata", "$ref"}, "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
	}
	for _, c := range checks {
		if got := at(doc, c.path...); got != c.want {
			t.Errorf("%v = %#v, want %#v", c.path, got, c.want)
		}
	}
	anyOf, _ := at(doc, "properties", "spec", "properties", "port", "anyOf").([]any)
	if len(anyOf) != 2 || at(anyOf[0].(map[string]any), "type") != "integer" || at(anyOf[1].(map[string]any), "type") != "string" {
		t.Errorf("int-or-string anyOf = %v", anyOf)
	}
	if req, _ := at(doc, "properties", "spec", "properties", "template", "required").([]any); len(req) != 2 {
		t.Errorf("embedded resource required = %v", req)
	}
	if keys, _ := at(doc, "properties", "spec", "properties", "ports", "x-kubernetes-list-map-keys").([]any); len(keys) != 1 || keys[0] != "name" {
		t.Errorf("list-map-keys = %v", keys)
	}
}
