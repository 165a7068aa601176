package crdschema

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/warning"
)

// This file evaluates a ruleTree on an object as kube-apiserver's rule
// validator (apiextensions-apiserver's cel.Validator) does: the same walk
// (a node's rules, then its allOf rules, then its items or its properties
// and additionalProperties), the same shared runtime cost budget, the same
// messages, reasons, field paths and ratcheting. Values are adapted by
// toVal (celvalues.go), which answers as Kubernetes' adapter
// (common.UnstructuredToVal) does, over the node's celSchema.

// ratchet is the correlation of the value being validated with its old
// value: current for the value itself (nil when it has no old value) and
// parent for the nearest value above that had one.
type ratchet struct {
	current, parent *common.CorrelatedObject
}

// ratchets reports whether an error on the value is ratcheted (a warning):
// the value, or when it cannot be correlated its parent, equals the old.
func (r ratchet) ratchets() bool {
	if r.current != nil {
		return r.current.CachedDeepEqual()
	}
	return r.parent.CachedDeepEqual()
}

// key is the correlation of a property or map value. apiVersion and kind
// of the root are never correlated.
func (r ratchet) key(name string) ratchet {
	switch {
	case r.current == nil:
		return r
	case r.parent == nil && (name == "apiVersion" || name == "kind"):
		return ratchet{}
	}
	return ratchet{current: r.current.Key(name), parent: r.current}
}

// index is the correlation of a list item.
func (r ratchet) index(i int) ratchet {
	if r.current == nil {
		return r
	}
	return ratchet{current: r.current.Index(i), parent: r.current}
}

// validate evaluates the rules of t and of the nodes below it on obj (old
// is its old value, nil on create), spending budget; a negative remaining
// budget means evaluation stopped.
func (t *ruleTree) validate(ctx context.Context, p *field.Path, obj, old any, r ratchet, budget int64) (field.ErrorList, int64) {
	if t == nil || obj == nil {
		return nil, budget
	}
	errs, budget := t.evalRules(ctx, p, obj, old, r, budget)
	if budget < 0 {
		return errs, budget
	}
	for _, sub := range t.allOf {
		var subErrs field.ErrorList
		subErrs, budget = sub.validate(ctx, p, obj, old, ratchet{parent: r.parent}, budget)
		errs = append(errs, subErrs...)
		if budget < 0 {
			return errs, budget
		}
	}
	var childErrs field.ErrorList
	switch obj := obj.(type) {
	case []any:
		oldList, _ := old.([]any)
		childErrs, budget = t.validateItems(ctx, p, obj, oldList, r, budget)
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		childErrs, budget = t.validateFields(ctx, p, obj, oldMap, r, budget)
	}
	return append(errs, childErrs...), budget
}

// validateFields evaluates the subtrees of an object's additional values,
// then of its properties. Old values are looked up by key unless the map
// type makes them uncorrelatable.
func (t *ruleTree) validateFields(ctx context.Context, p *field.Path, obj, old map[string]any, r ratchet, budget int64) (field.ErrorList, int64) {
	correlatable := cel.MapIsCorrelatable(t.mapType)
	var errs field.ErrorList
	visit := func(sub *ruleTree, childPath *field.Path, k string, v any) bool {
		var oldV any
		if correlatable {
			oldV = old[k]
		}
		var subErrs field.ErrorList
		subErrs, budget = sub.validate(ctx, childPath, v, oldV, r.key(k), budget)
		errs = append(errs, subErrs...)
		return budget >= 0
	}
	if t.additional != nil {
		for k, v := range obj {
			if !visit(t.additional, p.Key(k), k, v) {
				return errs, budget
			}
		}
	}
	if t.properties != nil {
		for k, v := range obj {
			if sub, ok := t.properties[k]; ok && !visit(sub, p.Child(k), k, v) {
				return errs, budget
			}
		}
	}
	return errs, budget
}

// validateItems evaluates the items subtree on each item, correlating old
// items by their map keys (list-type map) or else not at all.
func (t *ruleTree) validateItems(ctx context.Context, p *field.Path, obj, old []any, r ratchet, budget int64) (field.ErrorList, int64) {
	if t.items == nil {
		return nil, budget
	}
	oldItems := common.MakeMapList(t.schema, old)
	var errs field.ErrorList
	for i, item := range obj {
		var itemErrs field.ErrorList
		itemErrs, budget = t.items.validate(ctx, p.Index(i), item, oldItems.Get(item), r.index(i), budget)
		errs = append(errs, itemErrs...)
		if budget < 0 {
			return errs, budget
		}
	}
	return errs, budget
}

// evalRules evaluates the node's own rules on obj.
func (t *ruleTree) evalRules(ctx context.Context, p *field.Path, obj, old any, r ratchet, budget int64) (field.ErrorList, int64) {
	old = nilIfTypedNil(old)
	switch {
	case t.compileErr != nil:
		return field.ErrorList{field.Invalid(p, t.typ, fmt.Sprintf("rule compiler initialization error: %v", t.compileErr))}, budget
	case len(t.compiled) == 0:
		return nil, budget
	case budget <= 0:
		return field.ErrorList{field.Invalid(p, t.typ, "validation failed due to running out of cost budget, no further validation rules will be run")}, -1
	}
	act, optionalAct := t.activations(obj, old)
	var errs field.ErrorList
	for i := range t.compiled {
		compiled, rule := &t.compiled[i], t.rules[i]
		if compiled.Error != nil {
			errs = append(errs, field.Invalid(p, t.typ, fmt.Sprintf("rule compile error: %v", compiled.Error)))
			continue
		}
		if compiled.Program == nil {
			continue
		}
		optional := rule.OptionalOldSelf != nil && *rule.OptionalOldSelf
		if compiled.UsesOldSelf && old == nil && !optional {
			continue // a transition rule on create
		}
		ruleAct := act
		if optional {
			ruleAct = optionalAct
		}
		e := ruleEval{ctx: ctx, t: t, path: p, obj: obj, r: r, act: act}
		var stop bool
		errs, budget, stop = e.run(errs, compiled, rule, ruleAct, budget)
		if stop {
			return errs, -1
		}
	}
	return errs, budget
}

// nilIfTypedNil turns a nil map, slice, pointer or interface held in v
// into a plain nil: such an old value is no old value.
func nilIfTypedNil(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Interface, reflect.Slice:
		if rv.IsNil() {
			return nil
		}
	}
	return v
}

// activations returns what rules see: self, and oldSelf when a rule of the
// node uses it (absent on create); the second activation is that of rules
// with optionalOldSelf, where oldSelf is an optional.
func (t *ruleTree) activations(obj, old any) (interpreter.Activation, interpreter.Activation) {
	self := toVal(obj, t.self)
	if !t.usesOldSelf {
		a := &ruleActivation{self: self}
		return a, a
	}
	a := &ruleActivation{self: self}
	optional := &ruleActivation{self: self, hasOldSelf: true, oldSelf: types.OptionalNone}
	if old != nil {
		a.oldSelf, a.hasOldSelf = toVal(old, t.self), true
		optional.oldSelf = types.OptionalOf(a.oldSelf)
	}
	return a, optional
}

// ruleActivation resolves self and oldSelf.
type ruleActivation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *ruleActivation) ResolveName(name string) (any, bool) {
	switch name {
	case cel.ScopedVarName:
		return a.self, true
	case cel.OldScopedVarName:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *ruleActivation) Parent() interpreter.Activation { return nil }

// ruleErrorString is how errors name a rule: its message, or the rule.
func ruleErrorString(rule apiextv1.ValidationRule) string {
	if rule.Message != "" {
		return strings.TrimSpace(rule.Message)
	}
	return strings.TrimSpace(rule.Rule)
}

// ruleFailureMessage is the detail of a failed rule without (a usable)
// messageExpression.
func ruleFailureMessage(rule apiextv1.ValidationRule) string {
	if rule.Message == "" {
		return "failed rule: " + ruleErrorString(rule)
	}
	return strings.TrimSpace(rule.Message)
}

// reasonError is the error of a failed rule, of the type its reason names
// (Invalid when none).
func reasonError(p *field.Path, value any, detail string, reason *apiextv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(p, value, detail)
	}
	switch *reason {
	case apiextv1.FieldValueForbidden:
		return field.Forbidden(p, detail)
	case apiextv1.FieldValueRequired:
		return field.Required(p, detail)
	case apiextv1.FieldValueDuplicate:
		return field.Duplicate(p, value)
	}
	return field.Invalid(p, value, detail)
}

// costOver reports whether a runtime cost does not fit in what is left of
// the budget.
func costOver(cost uint64, budget int64) bool {
	return cost > math.MaxInt64 || int64(cost) > budget
}

// warn reports a ratcheted error as a warning of the request.
func warn(ctx context.Context, e *field.Error) { warning.AddWarning(ctx, "", e.Error()) }
