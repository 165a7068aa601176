package openapifacts

import (
	"strings"
	"testing"
)

const v3doc = `{"components":{"schemas":{
 "io.k8s.api.x.v1.Spec":{"type":"object","required":["mode"],"x-kubernetes-map-type":"atomic",
  "properties":{
   "mode":{"description":"prose that is not carried","type":"string","default":"Fast","enum":["Fast","Slow"]},
   "modes":{"type":"array","items":{"type":"string","enum":["A","B"]},"x-kubernetes-list-type":"set"},
   "ports":{"type":"array","items":{"$ref":"#/components/schemas/P"},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port","protocol"]},
   "plain":{"type":"string"}}},
 "io.k8s.apimachinery.pkg.apis.meta.v1.Status":{"type":"object","x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"Status"}]}}}}`

const v2doc = `{"definitions":{"io.k8s.apimachinery.pkg.apis.meta.v1.Status":{"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"Status"}]}}}`

func TestExtractAndRender(t *testing.T) {
	f, err := Extract(map[string][]byte{"apis/x/v1": []byte(v3doc), "apis/x/v2": []byte(v3doc)}, []byte(v2doc))
	if err != nil {
		t.Fatal(err)
	}
	m := f.Models["io.k8s.api.x.v1.Spec"]
	if m == nil || strings.Join(m.Required, ",") != "mode" || m.MapType != "atomic" {
		t.Fatalf("Spec = %+v", m)
	}
	if p := m.Props["mode"]; strings.Join(p.Enum, ",") != "Fast,Slow" || p.Default != `"Fast"` {
		t.Errorf("mode = %+v", p)
	}
	if p := m.Props["modes"]; strings.Join(p.ItemEnum, ",") != "A,B" || p.ListType != "set" {
		t.Errorf("modes = %+v", p)
	}
	if p := m.Props["ports"]; p.ListType != "map" || strings.Join(p.ListMapKeys, ",") != "port,protocol" {
		t.Errorf("ports = %+v", p)
	}
	if _, ok := m.Props["plain"]; ok {
		t.Error("a property without facts was recorded")
	}
	if s := f.Models["io.k8s.apimachinery.pkg.apis.meta.v1.Status"]; len(s.GVKs) != 1 || s.GVKs[0].Kind != "Status" {
		t.Errorf("Status = %+v", s)
	}
	src, err := f.Render("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`enum: []string{"Fast", "Slow"}`, `def: "\"Fast\""`, `itemEnum: []string{"A", "B"}`, `import "k8s.io/apimachinery/pkg/runtime/schema"`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("rendered source lacks %s:\n%s", want, src)
		}
	}
	if strings.Contains(string(src), "prose") {
		t.Error("a description was carried over")
	}
}

func TestExtractRefusesDisagreeingDocuments(t *testing.T) {
	other := strings.Replace(v3doc, `"enum":["Fast","Slow"]`, `"enum":["Fast"]`, 1)
	if _, err := Extract(map[string][]byte{"a": []byte(v3doc), "b": []byte(other)}, []byte(v2doc)); err == nil {
		t.Error("two documents with different facts for one model were accepted")
	}
}
