package crdschema

import (
	"context"
	"reflect"
	"sort"
	"sync"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// TestCelSchemaMatchesKubernetes: at every node of rulesSchema (and of its
// type/object-meta form), the caching adapter answers what
// apiextensions-apiserver's model.Structural answers, and resolves each
// node's children once: the same map and the same child schemas on every
// call.
func TestCelSchemaMatchesKubernetes(t *testing.T) {
	s := compile(t, rulesSchema)
	root := newCelSchema(s.structural)
	kube := &model.Structural{Structural: s.structural}
	compareSchemas(t, "root", root, kube)
	compareSchemas(t, "root+meta", root.WithTypeAndObjectMeta(), kube.WithTypeAndObjectMeta())
	if root.WithTypeAndObjectMeta() != root.WithTypeAndObjectMeta() {
		t.Error("WithTypeAndObjectMeta built twice")
	}
}

// compareSchemas walks ours and kube's side by side.
func compareSchemas(t *testing.T, path string, ours, kube common.Schema) {
	t.Helper()
	if (ours == nil) != (kube == nil) {
		t.Fatalf("%s: nil %v, Kubernetes nil %v", path, ours == nil, kube == nil)
	}
	if ours == nil {
		return
	}
	if ours.Type() != kube.Type() || ours.Format() != kube.Format() || ours.Nullable() != kube.Nullable() ||
		ours.IsXIntOrString() != kube.IsXIntOrString() || ours.IsXEmbeddedResource() != kube.IsXEmbeddedResource() ||
		ours.IsXPreserveUnknownFields() != kube.IsXPreserveUnknownFields() || ours.XListType() != kube.XListType() ||
		ours.XMapType() != kube.XMapType() || !reflect.DeepEqual(ours.XListMapKeys(), kube.XListMapKeys()) ||
		!reflect.DeepEqual(ours.MaxLength(), kube.MaxLength()) || !reflect.DeepEqual(ours.XValidations(), kube.XValidations()) {
		t.Errorf("%s: scalar answers differ from Kubernetes'", path)
	}

	props, kubeProps := ours.Properties(), kube.Properties()
	if (props == nil) != (kubeProps == nil) || len(props) != len(kubeProps) {
		t.Fatalf("%s: properties %v, Kubernetes %v", path, keys(props), keys(kubeProps))
	}
	if props != nil && reflect.ValueOf(ours.Properties()).Pointer() != reflect.ValueOf(props).Pointer() {
		t.Errorf("%s: properties rebuilt on a second call", path)
	}
	for _, name := range keys(props) {
		if ours.Properties()[name] != props[name] {
			t.Errorf("%s.%s: a new child schema on a second call", path, name)
		}
		compareSchemas(t, path+"."+name, props[name], kubeProps[name])
	}

	items := ours.Items()
	if items != ours.Items() {
		t.Errorf("%s: items rebuilt on a second call", path)
	}
	compareSchemas(t, path+"[]", items, kube.Items())

	ap, kubeAP := ours.AdditionalProperties(), kube.AdditionalProperties()
	if (ap == nil) != (kubeAP == nil) {
		t.Fatalf("%s: additionalProperties nil %v, Kubernetes nil %v", path, ap == nil, kubeAP == nil)
	}
	if ap != nil {
		if ap != ours.AdditionalProperties() || ap.Schema() != ap.Schema() {
			t.Errorf("%s: additionalProperties rebuilt on a second call", path)
		}
		if ap.Allows() != kubeAP.Allows() {
			t.Errorf("%s: additionalProperties allows %v, Kubernetes %v", path, ap.Allows(), kubeAP.Allows())
		}
		compareSchemas(t, path+"{}", ap.Schema(), kubeAP.Schema())
	}
}

func keys(m map[string]common.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCelSchemaEmptyProperties: an empty, non-nil properties map is an
// empty, non-nil Properties (CEL treats the value as an object, not as a
// free-form map), and no properties is nil, as with Kubernetes' adapter.
func TestCelSchemaEmptyProperties(t *testing.T) {
	for _, st := range []*structuralschema.Structural{
		{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{}},
		{Generic: structuralschema.Generic{Type: "object"}},
	} {
		ours, kube := newCelSchema(st).Properties(), (&model.Structural{Structural: st}).Properties()
		if (ours == nil) != (kube == nil) || len(ours) != 0 {
			t.Errorf("properties %#v: got %#v, Kubernetes %#v", st.Properties, ours, kube)
		}
	}
}

// TestRuleTreeIsPerSchema: each compiled Schema has its own compiled rules
// and adapters (a CRD change or another version compiles a new Schema,
// which never sees another's), built once however many objects are
// validated.
func TestRuleTreeIsPerSchema(t *testing.T) {
	a := compile(t, `
type: object
properties:
  size: {type: integer, x-kubernetes-validations: [{rule: "self < 10", message: "a"}]}
`)
	b := compile(t, `
type: object
properties:
  size: {type: integer, x-kubernetes-validations: [{rule: "self < 5", message: "b"}]}
`)
	obj := object(t, `{"size": 7}`)
	if got := joined(a.ValidateRules(context.Background(), obj, nil)); got != "" {
		t.Errorf("a: %s", got)
	}
	if got := joined(b.ValidateRules(context.Background(), obj, nil)); got != "size: Invalid value: 7: b" {
		t.Errorf("b: %s", got)
	}
	tree := a.ruleValidator()
	a.ValidateRules(context.Background(), obj, nil)
	if a.ruleValidator() != tree || tree == b.ruleValidator() {
		t.Error("rule trees are not one per Schema")
	}
}

// TestValidateRulesConcurrent: one Schema validates from many goroutines
// at once (the adapters resolve children lazily), each getting the answer
// it gets alone. Run with -race.
func TestValidateRulesConcurrent(t *testing.T) {
	s := compile(t, rulesSchema)
	objs := []string{
		`{"metadata":{"name":"w1"},"spec":{"minReplicas":1,"maxReplicas":2,"tags":["a","b"],"limits":{"mem":"512Mi"},"ports":[{"name":"http","port":80}],"template":{"apiVersion":"v1","kind":"ConfigMap"}},"status":{"phase":"Ready"}}`,
		`{"metadata":{"name":"x"},"spec":{"minReplicas":5,"maxReplicas":3,"tags":["b","A"],"limits":{"cpu":"2Gi"},"template":{"kind":"Secret"}},"status":{"phase":"Lost"}}`,
	}
	type outcome struct{ errs, warned []string }
	alone := func(s *Schema, obj string, update bool) outcome {
		var old map[string]any
		if update {
			old = object(t, obj)
		}
		errs, warned := ourRuleOutcome(s, object(t, obj), old)
		return outcome{errs, warned}
	}
	want := map[[2]int]outcome{}
	for i, o := range objs {
		want[[2]int{i, 0}], want[[2]int{i, 1}] = alone(s, o, false), alone(s, o, true)
	}
	fresh := compile(t, rulesSchema) // adapters not yet resolved
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				i, update := (g+n)%len(objs), n%2
				if got := alone(fresh, objs[i], update == 1); !reflect.DeepEqual(got, want[[2]int{i, update}]) {
					t.Errorf("object %d (update %d): %q, want %q", i, update, got, want[[2]int{i, update}])
				}
			}
		}()
	}
	wg.Wait()
}
