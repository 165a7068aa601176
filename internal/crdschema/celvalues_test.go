package crdschema

import (
	"context"
	"fmt"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// valuesSchema's spec has a value of every shape the adapter handles:
// escaped property names, nullable, int-or-string and formatted strings,
// maps of scalars and of objects, objects, objects preserving unknown
// fields, an embedded resource, atomic, set and map lists, and a list of
// objects.
const valuesSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      a.b: {type: string, maxLength: 8}
      x-y: {type: integer}
      namespace: {type: string, maxLength: 8}
      under__score: {type: string, maxLength: 8}
      nullable: {type: string, nullable: true, maxLength: 8}
      ios: {x-kubernetes-int-or-string: true}
      dur: {type: string, format: duration, maxLength: 8}
      num: {type: number}
      m: {type: object, maxProperties: 4, additionalProperties: {type: string, maxLength: 8}}
      objm: {type: object, maxProperties: 4, additionalProperties: {type: object, properties: {v: {type: integer}}}}
      o1: {type: object, properties: {p: {type: string, maxLength: 8}, q: {type: integer}}}
      free: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {known: {type: string, maxLength: 8}}}
      emb: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true, properties: {spec: {type: object, properties: {n: {type: integer}}}}}
      strs: {type: array, maxItems: 4, items: {type: string, maxLength: 8}}
      ints: {type: array, maxItems: 4, items: {type: integer}}
      set1: {type: array, maxItems: 4, x-kubernetes-list-type: set, items: {type: string, maxLength: 8}}
      ml1: {type: array, maxItems: 4, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name], items: {type: object, required: [name], properties: {name: {type: string, maxLength: 8}, v: {type: integer}}}}
      mk1: {type: array, maxItems: 4, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [a, b], items: {type: object, required: [a, b], properties: {a: {type: string, maxLength: 8}, b: {type: integer}, c: {type: string, maxLength: 8}}}}
      objs: {type: array, maxItems: 4, items: {type: object, properties: {name: {type: string, maxLength: 8}}}}
      mlf: {type: array, maxItems: 4, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name], items: {type: object, x-kubernetes-preserve-unknown-fields: true, required: [name], properties: {name: {type: string, maxLength: 8}}}}
`

// valuesObject is self; valuesOld is oldSelf: the same values with maps
// and set and map lists in another order, and other unknown fields.
const (
	valuesObject = `{"spec": {"a.b": "x", "x-y": 2, "namespace": "ns", "under__score": "u", "nullable": null, "ios": 3,
 "dur": "90s", "num": 1.5, "m": {"k1": "v1", "k2": "v2"}, "objm": {"a": {"v": 1}, "b": {"v": 2}}, "o1": {"p": "p", "q": 1},
 "free": {"known": "k", "extra": {"deep": [1, 2]}},
 "emb": {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "n"}, "spec": {"n": 1}, "other": true},
 "strs": ["b", "a", "c"], "ints": [3, 1, 2], "set1": ["a", "b", "c"],
 "ml1": [{"name": "a", "v": 1}, {"name": "b", "v": 2}], "mk1": [{"a": "x", "b": 1, "c": "p"}, {"a": "x", "b": 2}],
 "objs": [{"name": "x"}, {"name": "y"}], "mlf": [{"name": "a", "u": 1}, {"name": "b", "u": [1]}]}}`
	valuesOld = `{"spec": {"a.b": "x", "x-y": 2, "namespace": "ns", "under__score": "u", "ios": "3",
 "dur": "90s", "num": 1.5, "m": {"k2": "v2", "k1": "v1"}, "objm": {"b": {"v": 2}, "a": {"v": 1}}, "o1": {"q": 1, "p": "p"},
 "free": {"known": "k", "extra": {"deep": [2, 1]}},
 "emb": {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "n"}, "spec": {"n": 1}, "other": false},
 "strs": ["b", "a", "c"], "ints": [1, 2, 3], "set1": ["c", "a", "b"],
 "ml1": [{"name": "b", "v": 2}, {"name": "a", "v": 1}], "mk1": [{"a": "x", "b": 2}, {"a": "x", "b": 1, "c": "p"}],
 "objs": [{"name": "x"}, {"name": "y"}], "mlf": [{"name": "b", "u": [1]}]}}`
)

// valuesExpressions are evaluated on the spec of valuesObject (self) and
// valuesOld (oldSelf), each also negated, so that a wrong true and a
// wrong false both show.
var valuesExpressions = []string{
	"self.a__dot__b == 'x'", "has(self.a__dot__b)", "self.x__dash__y > 1", "self.__namespace__ == 'ns'",
	"self.under__underscores__score == 'u'", "has(self.nullable)", "has(oldSelf.nullable)", "self.ios == 3",
	"oldSelf.ios == '3'", "self.ios == oldSelf.ios", "self.dur > duration('1m')", "self.num > 1.0",
	"self.m.size() == 2", "'k1' in self.m", "self.m['k1'] == 'v1'", "self.m['zz'] == 'v1'",
	"self.m.all(k, self.m[k].size() == 2)", "self.m == oldSelf.m", "self.m.exists(k, k == 'zz')",
	"self.m.filter(k, k != 'k1').size() == 1", "self.m.map(k, self.m[k]).size() == 2",
	"self.objm['a'].v == 1", "self.objm == oldSelf.objm", "self.objm.all(k, self.objm[k].v > 0)",
	"self.o1 == oldSelf.o1", "self.o1.p == 'p'", "has(self.o1.p)",
	"self.free == oldSelf.free", "self.free.known == 'k'", "self.free == self.free",
	"self.emb.kind == 'Foo'", "self.emb.metadata.name == 'n'", "has(self.emb.apiVersion)", "has(self.emb.spec)",
	"self.emb == oldSelf.emb", "self.emb == self.emb", "self == oldSelf", "self == self",
	"self.strs.join(',') == 'b,a,c'", "'a' in self.strs", "self.strs[0] == 'b'", "self.strs[5] == 'x'",
	"self.strs + ['d'] == ['b', 'a', 'c', 'd']", "self.strs.size() == 3", "self.strs.indexOf('a') == 1",
	"self.strs.isSorted()", "self.strs.all(s, s.size() == 1)", "self.strs.exists_one(s, s == 'c')",
	"self.ints.sum() == 6", "self.ints.min() == 1", "self.ints.max() == 3", "self.ints == oldSelf.ints",
	"self.strs.map(s, s + s).size() == 3", "self.strs.filter(s, s > 'a').size() == 2",
	"self.set1 == oldSelf.set1", "self.set1 + ['z'] == ['a', 'b', 'c', 'z']", "(self.set1 + oldSelf.set1).size() == 3",
	"self.set1 + ['a'] == oldSelf.set1", "'b' in self.set1", "oldSelf.set1 + self.set1 == self.set1",
	"self.ml1 == oldSelf.ml1", "(self.ml1 + oldSelf.ml1).size() == 2", "self.ml1 + oldSelf.ml1 == oldSelf.ml1",
	"oldSelf.ml1 == self.ml1 + oldSelf.ml1", "self.ml1.exists(e, e.name == 'b' && e.v == 2)", "self.ml1[0].name == 'a'",
	"self.mk1 == oldSelf.mk1", "(self.mk1 + oldSelf.mk1).size() == 2", "self.mk1.all(e, e.a == 'x')",
	"self.objs.exists(o, o.name == 'x')", "self.objs.map(o, o.name) == ['x', 'y']", "self.objs[1].name == 'y'",
	"self.objs == oldSelf.objs", "self.ml1 + oldSelf.ml1 + self.ml1 == self.ml1", "self.mlf == oldSelf.mlf",
	"self.mlf + oldSelf.mlf == oldSelf.mlf", "self.mlf + oldSelf.mlf == self.mlf", "oldSelf.mlf == self.mlf + self.mlf",
	"(self.mlf + oldSelf.mlf).exists(e, e.name == 'a')",
}

// TestValuesMatchKubernetes: every expression of valuesExpressions (and
// its negation) gives the same result or error and the same runtime cost
// with toVal's values as with Kubernetes' adapter's.
func TestValuesMatchKubernetes(t *testing.T) {
	var rules strings.Builder
	for _, e := range valuesExpressions {
		for _, rule := range []string{e, "!(" + e + ")"} {
			fmt.Fprintf(&rules, "    - {rule: %q}\n", rule)
		}
	}
	y := strings.Replace(valuesSchema, "    type: object\n    properties:\n      a.b:", "    type: object\n    x-kubernetes-validations:\n"+rules.String()+"    properties:\n      a.b:", 1)
	s := compile(t, y)
	spec := s.ruleValidator().properties["spec"]
	obj, old := object(t, valuesObject)["spec"], object(t, valuesOld)["spec"]
	specSchema := s.structural.Properties["spec"]
	kubeSchema := &model.Structural{Structural: &specSchema}
	ours := &ruleActivation{self: toVal(obj, spec.self), oldSelf: toVal(old, spec.self), hasOldSelf: true}
	theirs := &ruleActivation{self: common.UnstructuredToVal(obj, kubeSchema), oldSelf: common.UnstructuredToVal(old, kubeSchema), hasOldSelf: true}
	if len(spec.compiled) != 2*len(valuesExpressions) {
		t.Fatalf("%d rules compiled, want %d", len(spec.compiled), 2*len(valuesExpressions))
	}
	for i, c := range spec.compiled {
		if c.Error != nil {
			t.Errorf("rule %q: %v", spec.rules[i].Rule, c.Error)
			continue
		}
		got, gotCost := evalWith(t, c.Program, ours)
		want, wantCost := evalWith(t, c.Program, theirs)
		if got != want || gotCost != wantCost {
			t.Errorf("rule %q:\n got %s (cost %d)\nwant %s (cost %d)", spec.rules[i].Rule, got, gotCost, want, wantCost)
		}
	}
}

// evalWith evaluates prog with act: its result (or error) as text and
// its runtime cost.
func evalWith(t *testing.T, prog celgo.Program, act *ruleActivation) (string, uint64) {
	t.Helper()
	out, details, err := prog.ContextEval(context.Background(), act)
	if details == nil || details.ActualCost() == nil {
		t.Fatalf("no runtime cost")
	}
	if err != nil {
		return "error: " + err.Error(), *details.ActualCost()
	}
	return fmt.Sprintf("%v", out), *details.ActualCost()
}
