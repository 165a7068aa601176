package validatingadmissionpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
)

// maxMessageBytes is kube-apiserver's limit on a messageExpression's
// result (celconfig.MaxEvaluatedMessageExpressionSizeBytes).
const maxMessageBytes = 5 * 1024

// decision is the outcome of one validation (or of an error standing for
// all of them).
type decision struct {
	deny    bool
	evalErr bool
	message string
	reason  metav1.StatusReason
	index   int
}

// auditAnnotation is the outcome of one audit annotation: publish
// value, exclude, or (err) an error.
type auditAnnotation struct {
	key, value string
	publish    bool
	err        string
}

func failurePolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) admissionregistrationv1.FailurePolicyType {
	if p.Spec.FailurePolicy == nil {
		return admissionregistrationv1.Fail
	}
	return *p.Spec.FailurePolicy
}

// errorDecision is an error acted on as the failure policy says.
func errorDecision(f admissionregistrationv1.FailurePolicyType, msg string) decision {
	return decision{deny: f != admissionregistrationv1.Ignore, evalErr: true, message: msg}
}

// matchConditions evaluates the policy's matchConditions: whether the
// validations run, or an error decision.
func (cp *compiled) evalMatchConditions(ctx context.Context, in *policycel.Input) (bool, *decision) {
	if len(cp.matchConditions) == 0 {
		return true, nil
	}
	f := failurePolicy(cp.policy)
	noNamespace := *in
	noNamespace.Namespace = nil
	act := cp.compiler.NewActivation(ctx, &noNamespace, true)
	budget := int64(policycel.MatchConditionsCostBudget)
	var errs []string
	for _, c := range cp.matchConditions {
		r, left, err := act.Eval(c, budget)
		if err != nil {
			if f == admissionregistrationv1.Ignore {
				return false, nil
			}
			d := errorDecision(f, err.Error())
			return false, &d
		}
		budget = left
		if r.Err != nil {
			errs = append(errs, r.Err.Error())
			continue
		}
		if r.Value == celtypes.False {
			return false, nil
		}
	}
	if len(errs) > 0 {
		if f == admissionregistrationv1.Ignore {
			return false, nil
		}
		msg := errs[0]
		if len(errs) > 1 {
			msg = "[" + strings.Join(errs, ", ") + "]"
		}
		d := errorDecision(f, msg)
		return false, &d
	}
	return true, nil
}

// validate evaluates the validations for one param, as kube-apiserver's
// validator.
func (cp *compiled) validate(ctx context.Context, in *policycel.Input) []decision {
	f := failurePolicy(cp.policy)
	if cp.err != nil {
		return []decision{errorDecision(f, cp.err.Error())}
	}
	if ok, d := cp.evalMatchConditions(ctx, in); d != nil {
		return []decision{*d}
	} else if !ok {
		return nil
	}
	act := cp.compiler.NewActivation(ctx, in, true)
	results, budget, err := act.EvalAll(cp.validations, policycel.RuntimeCostBudget)
	if err != nil {
		return []decision{errorDecision(f, err.Error())}
	}
	msgAct := cp.compiler.NewActivation(ctx, in, false)
	messages := make([]policycel.Result, len(cp.messages))
	var msgErr error
	for i, c := range cp.messages {
		if c == nil {
			continue
		}
		var left int64
		if messages[i], left, msgErr = msgAct.Eval(c, budget); msgErr != nil {
			break
		}
		budget = left
	}
	out := make([]decision, len(results))
	for i, r := range results {
		v := cp.policy.Spec.Validations[i]
		switch {
		case r.Err != nil:
			out[i] = errorDecision(f, r.Err.Error())
		case msgErr != nil:
			out[i] = errorDecision(f, fmt.Sprintf("failed messageExpression: %s", msgErr))
		case r.Value != celtypes.True:
			out[i] = decision{deny: true, message: denyMessage(v, messages[i]), reason: reason(v)}
		}
		out[i].index = i
	}
	return out
}

func reason(v admissionregistrationv1.Validation) metav1.StatusReason {
	if v.Reason == nil {
		return metav1.StatusReasonInvalid
	}
	return *v.Reason
}

// denyMessage is a failed validation's message: its messageExpression's
// (a one-line string within the size limit), else its message, else
// "failed expression: <expression>".
func denyMessage(v admissionregistrationv1.Validation, m policycel.Result) string {
	var msg string
	if m.Err == nil && m.Value != nil {
		if s, ok := m.Value.Value().(string); ok {
			msg = strings.TrimSpace(s)
			if len(msg) > maxMessageBytes || strings.ContainsAny(msg, "\n") {
				msg = ""
			}
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(v.Message)
	}
	if msg == "" {
		msg = fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.Expression))
	}
	return msg
}

// auditAnnotations evaluates the policy's audit annotations.
func (cp *compiled) evalAuditAnnotations(ctx context.Context, in *policycel.Input) ([]auditAnnotation, *decision) {
	if len(cp.auditAnnotations) == 0 || cp.err != nil {
		return nil, nil
	}
	f := failurePolicy(cp.policy)
	act := cp.compiler.NewActivation(ctx, in, false)
	results, _, err := act.EvalAll(cp.auditAnnotations, policycel.RuntimeCostBudget)
	if err != nil {
		d := errorDecision(f, err.Error())
		return nil, &d
	}
	out := make([]auditAnnotation, len(results))
	for i, r := range results {
		a := cp.policy.Spec.AuditAnnotations[i]
		out[i].key = a.Key
		switch {
		case r.Err != nil:
			if f != admissionregistrationv1.Ignore {
				out[i].err = r.Err.Error()
			}
		case r.Value.Type() == celtypes.StringType:
			if v := strings.TrimSpace(r.Value.Value().(string)); v != "" {
				out[i].publish, out[i].value = true, v
			}
		case r.Value.Type() == celtypes.NullType:
		default:
			out[i].err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. "+
				"Return type must be either string or null.", a.ValueExpression, r.Value.Type())
		}
	}
	return out, nil
}

var errNoMatchConstraints = errors.New("policy contained no match constraints, a required field")
