package crdschema

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/warning"
)

// kubeRuleOutcome evaluates s's rules with apiextensions-apiserver's own
// rule validator (cel.Validator, as kube-apiserver runs it), the
// reference ValidateRules must agree with: errors and ratcheting warnings,
// each sorted (both walk maps in Go's random order).
func kubeRuleOutcome(s *Schema, obj, old map[string]any) (errs, warned []string) {
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	v := cel.NewValidator(s.structural, true, celconfig.PerCallLimit)
	var oldObj any
	var opts []cel.Option
	if old != nil {
		oldObj = old
		opts = append(opts, cel.WithRatcheting(common.NewCorrelatedObject(obj, old, &model.Structural{Structural: s.structural})))
	}
	list, _ := v.Validate(ctx, nil, s.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return sortedOutcome(errorStrings(list), w.list)
}

// ourRuleOutcome is kubeRuleOutcome for ValidateRules.
func ourRuleOutcome(s *Schema, obj, old map[string]any) (errs, warned []string) {
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	return sortedOutcome(errorStrings(s.ValidateRules(ctx, obj, old)), w.list)
}

func sortedOutcome(errs, warned []string) ([]string, []string) {
	sort.Strings(errs)
	sort.Strings(warned)
	if len(errs) == 0 {
		errs = nil
	}
	if len(warned) == 0 {
		warned = nil
	}
	return errs, warned
}

// sameAsKubernetes fails t when ValidateRules and Kubernetes' validator
// disagree on obj (old nil on create).
func sameAsKubernetes(t testing.TB, s *Schema, obj, old map[string]any) {
	t.Helper()
	gotErrs, gotWarned := ourRuleOutcome(s, obj, old)
	wantErrs, wantWarned := kubeRuleOutcome(s, obj, old)
	if !reflect.DeepEqual(gotErrs, wantErrs) || !reflect.DeepEqual(gotWarned, wantWarned) {
		t.Errorf("ValidateRules and Kubernetes' validator differ:\n errors   %q\n warnings %q\nKubernetes:\n errors   %q\n warnings %q", gotErrs, gotWarned, wantErrs, wantWarned)
	}
}
