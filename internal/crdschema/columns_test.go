package crdschema

import (
	"reflect"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

const columnsObject = `{
 "metadata":{"name":"web","creationTimestamp":"2025-06-01T11:55:00Z","labels":{"app":"shop","app.kubernetes.io/name":"web"}},
 "spec":{"replicas":3,"ratio":0.25,"whole":2,"paused":false,"image":"nginx","items":[{"name":"a"},{"name":"b"}],"selector":{"matchLabels":{"a":"b"}},"nothing":null,"started":"2025-06-01T10:00:00Z","bad":"yesterday"},
 "status":{"conditions":[{"type":"Progressing","status":"True"},{"type":"Ready","status":"False","since":"2025-05-31T12:00:00Z"}]}
}`

func TestColumnsCells(t *testing.T) {
	cases := []struct {
		name, typ, path string
		want            any
	}{
		{"integer", "integer", ".spec.replicas", int64(3)},
		{"integer from float truncates", "integer", ".spec.ratio", int64(0)},
		{"number from float", "number", ".spec.ratio", 0.25},
		{"number from integer", "number", ".spec.whole", float64(2)},
		{"boolean", "boolean", ".spec.paused", false},
		{"boolean of a string is nil", "boolean", ".spec.image", nil},
		{"string", "string", ".spec.image", "nginx"},
		{"string of a number", "string", ".spec.replicas", "3"},
		{"string of a map prints JSON", "string", ".spec.selector", `{"matchLabels":{"a":"b"}}`},
		{"string of null", "string", ".spec.nothing", "<no value>"},
		{"date", "date", ".spec.started", "120m"},
		{"date unparsable", "date", ".spec.bad", "<invalid>"},
		{"missing is nil", "string", ".spec.absent.deeper", nil},
		{"index", "string", ".spec.items[1].name", "b"},
		{"negative index", "string", ".spec.items[-1].name", "b"},
		{"out of range is nil", "string", ".spec.items[5].name", nil},
		{"wildcard takes the first", "string", ".spec.items[*].name", "a"},
		{"label", "string", ".metadata.labels.app", "shop"},
		{"escaped dots in a key", "string", `.metadata.labels.app\.kubernetes\.io/name`, "web"},
		{"bracket key", "string", `.metadata.labels['app.kubernetes.io/name']`, "web"},
		{"filter", "string", `.status.conditions[?(@.type=="Ready")].status`, "False"},
		{"filter with single quotes and spaces", "string", `.status.conditions[?(@.type == 'Progressing')].status`, "True"},
		{"filter date", "date", `.status.conditions[?(@.type=="Ready")].since`, "24h"},
		{"filter without match is nil", "string", `.status.conditions[?(@.type=="Gone")].status`, nil},
		{"existence filter", "string", `.status.conditions[?(@.since)].type`, "Ready"},
		{"recursive descent", "string", `..matchLabels.a`, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewColumns([]apiextv1.CustomResourceColumnDefinition{{Name: "X", Type: tc.typ, JSONPath: tc.path}})
			if err != nil {
				t.Fatal(err)
			}
			cells := c.Cells(object(t, columnsObject), now)
			if len(cells) != 2 || cells[0] != "web" {
				t.Fatalf("cells %v", cells)
			}
			if !reflect.DeepEqual(cells[1], tc.want) {
				t.Errorf("got %#v want %#v", cells[1], tc.want)
			}
		})
	}
}

func TestColumnsDefinitions(t *testing.T) {
	c, err := NewColumns([]apiextv1.CustomResourceColumnDefinition{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas", Priority: 1, Format: "int32"},
		{Name: "Image", Type: "string", JSONPath: ".spec.image", Description: "the image"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defs := c.Definitions()
	if len(defs) != 3 || defs[0].Name != "Name" || defs[0].Format != "name" {
		t.Fatalf("definitions %+v", defs)
	}
	if defs[1].Name != "Replicas" || defs[1].Type != "integer" || defs[1].Priority != 1 || defs[1].Format != "int32" ||
		defs[1].Description != "Custom resource definition column (in JSONPath format): .spec.replicas" {
		t.Errorf("replicas column %+v", defs[1])
	}
	if defs[2].Description != "the image" {
		t.Errorf("image column %+v", defs[2])
	}
	if got := c.Cells(object(t, columnsObject), now); !reflect.DeepEqual(got, []any{"web", int64(3), "nginx"}) {
		t.Errorf("cells %#v", got)
	}
}

func TestColumnsDefaultAge(t *testing.T) {
	c, err := NewColumns(nil)
	if err != nil {
		t.Fatal(err)
	}
	defs := c.Definitions()
	if len(defs) != 2 || defs[1].Name != "Age" || defs[1].Type != "date" {
		t.Fatalf("definitions %+v", defs)
	}
	if got := c.Cells(object(t, columnsObject), now); !reflect.DeepEqual(got, []any{"web", "5m"}) {
		t.Errorf("cells %#v", got)
	}
	if got := c.Cells(map[string]any{}, now); !reflect.DeepEqual(got, []any{"", nil}) {
		t.Errorf("cells of an empty object %#v", got)
	}
}

func TestNewColumnsRejectsBadPaths(t *testing.T) {
	for _, p := range []string{".spec[", ".spec[abc]", ".spec[?(@.a==)]", ".spec..", "spec.x", `.a[?(b=="c")]`} {
		if _, err := NewColumns([]apiextv1.CustomResourceColumnDefinition{{Name: "X", Type: "string", JSONPath: p}}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}
