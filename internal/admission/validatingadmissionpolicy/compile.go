package validatingadmissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
)

// compiled is one policy, compiled.
type compiled struct {
	policy *admissionregistrationv1.ValidatingAdmissionPolicy
	// err is a failure to build the policy's environment.
	err              error
	compiler         *policycel.Compiler
	matchConditions  []*policycel.Compiled
	conditionNames   []string
	validations      []*policycel.Compiled
	messages         []*policycel.Compiled // nil where a validation has no messageExpression
	auditAnnotations []*policycel.Compiled
}

// compile compiles a policy as kube-apiserver does: variables, match
// conditions, validations and audit annotations with params (when the
// policy has a paramKind) and the authorizer; message expressions without
// the authorizer.
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiled {
	out := &compiled{policy: p}
	c, err := policycel.NewCompiler()
	if err != nil {
		out.err = err
		return out
	}
	out.compiler = c
	hasParams := p.Spec.ParamKind != nil
	withAuthz := policycel.Vars{Params: hasParams, Authorizer: true}
	noAuthz := policycel.Vars{Params: hasParams}
	for _, v := range p.Spec.Variables {
		c.AddVariable(v.Name, v.Expression, withAuthz)
	}
	for _, mc := range p.Spec.MatchConditions {
		out.matchConditions = append(out.matchConditions, c.Compile(mc.Expression, withAuthz, admissioncel.BoolResult))
		out.conditionNames = append(out.conditionNames, mc.Name)
	}
	for _, v := range p.Spec.Validations {
		out.validations = append(out.validations, c.Compile(v.Expression, withAuthz, admissioncel.BoolResult))
		var msg *policycel.Compiled
		if v.MessageExpression != "" {
			msg = c.Compile(v.MessageExpression, noAuthz, admissioncel.StringResult)
		}
		out.messages = append(out.messages, msg)
	}
	for _, a := range p.Spec.AuditAnnotations {
		out.auditAnnotations = append(out.auditAnnotations, c.Compile(a.ValueExpression, withAuthz, admissioncel.AnnotationResult))
	}
	return out
}
