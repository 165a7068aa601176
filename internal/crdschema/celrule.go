package crdschema

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// This file evaluates one rule (and its messageExpression when it fails)
// with kube-apiserver's runtime cost accounting and error messages.

// ruleEval is the node and value one rule is evaluated on.
type ruleEval struct {
	ctx  context.Context
	t    *ruleTree
	path *field.Path
	obj  any
	r    ratchet
	// act is the node's activation without optional oldSelf, the one
	// messageExpressions see.
	act interpreter.Activation
}

// run evaluates compiled (rule) with ruleAct, appending its error to errs
// and spending its cost; stop is set when evaluation must end (cost budget
// or limit exhausted, cost unknown).
func (e ruleEval) run(errs field.ErrorList, compiled *cel.CompilationResult, rule apiextv1.ValidationRule, ruleAct interpreter.Activation, budget int64) (_ field.ErrorList, _ int64, stop bool) {
	p, typ := e.path, e.t.typ
	result, details, err := compiled.Program.ContextEval(e.ctx, ruleAct)
	if details == nil {
		return append(errs, field.InternalError(p, fmt.Errorf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), budget, true
	}
	cost := details.ActualCost()
	if cost == nil {
		return append(errs, field.Invalid(p, typ, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), budget, true
	}
	if costOver(*cost, budget) {
		return append(errs, field.Invalid(p, typ, "validation failed due to running out of cost budget, no further validation rules will be run")), budget, true
	}
	budget -= int64(*cost)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.HasPrefix(msg, "no such overload"):
			return append(errs, field.Invalid(p, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(rule)))), budget, false
		case strings.HasPrefix(msg, "operation cancelled: actual cost limit exceeded"):
			return append(errs, field.Invalid(p, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(rule)))), budget, true
		}
		return append(errs, field.Invalid(p, typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule)))), budget, false
	}
	if result == types.True {
		return errs, budget, false
	}

	if compiled.NormalizedRuleFieldPath != "" {
		p = p.Child(compiled.NormalizedRuleFieldPath)
	}
	add := func(fe *field.Error) {
		if !compiled.UsesOldSelf && e.r.ratchets() {
			warn(e.ctx, fe)
		} else {
			errs = append(errs, fe)
		}
	}
	detail, ok := "", false
	if compiled.MessageExpression != nil {
		msg, left, msgErr := evalMessageExpression(e.ctx, compiled.MessageExpression, rule.MessageExpression, e.act, budget)
		switch {
		case msgErr == nil:
			detail, ok, budget = msg, true, left
		case msgErr.Type == apiservercel.ErrorTypeInternal:
			add(field.InternalError(p, msgErr))
			return errs, budget, true
		case msgErr.Type == apiservercel.ErrorTypeInvalid:
			add(field.Invalid(p, typ, msgErr.Error()))
			return errs, budget, true
		default:
			slog.DebugContext(e.ctx, "messageExpression evaluation failed", "err", msgErr)
			budget = left
		}
	}
	if !ok {
		detail = ruleFailureMessage(rule)
	}
	value := e.obj
	if typ == "object" || typ == "array" {
		value = field.OmitValueType{}
	}
	add(reasonError(p, value, detail, rule.Reason))
	return errs, budget, false
}

// evalMessageExpression evaluates a failed rule's messageExpression with
// what is left of the budget, returning the message and the budget left. An
// error of type Internal or Invalid ends validation; any other error means
// the rule's message is used instead.
func evalMessageExpression(ctx context.Context, prog celgo.Program, src string, act interpreter.Activation, budget int64) (string, int64, *apiservercel.Error) {
	result, details, err := prog.ContextEval(ctx, act)
	if details == nil || details.ActualCost() == nil {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src)}
	}
	cost := *details.ActualCost()
	if costOver(cost, budget) {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"}
	}
	left := budget - int64(cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src)}
		}
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression evaluation failed due to: %v", err.Error())}
	}
	msg, ok := result.Value().(string)
	if !ok {
		return "", left, &apiservercel.Error{Detail: "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > celconfig.MaxEvaluatedMessageExpressionSizeBytes:
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression beyond allowable length of %d", celconfig.MaxEvaluatedMessageExpressionSizeBytes)}
	case strings.Contains(msg, "\n"):
		return "", left, &apiservercel.Error{Detail: "messageExpression should not contain line breaks"}
	case msg == "":
		return "", left, &apiservercel.Error{Detail: "messageExpression should evaluate to a non-empty string"}
	}
	return msg, left, nil
}
