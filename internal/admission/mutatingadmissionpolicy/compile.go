package mutatingadmissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
)

// compiled is one policy, compiled.
type compiled struct {
	policy          *admissionregistrationv1.MutatingAdmissionPolicy
	err             error
	compiler        *policycel.Compiler
	matchConditions []*policycel.Compiled
	mutations       []*policycel.Compiled
}

// compile compiles a policy as kube-apiserver does: variables and match
// conditions with params (when it has a paramKind) and the authorizer;
// mutations also with the patch types (Object, JSONPatch).
func compile(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiled {
	out := &compiled{policy: p}
	c, err := policycel.NewCompiler()
	if err != nil {
		out.err = err
		return out
	}
	out.compiler = c
	vars := policycel.Vars{Params: p.Spec.ParamKind != nil, Authorizer: true}
	for _, v := range p.Spec.Variables {
		c.AddVariable(v.Name, v.Expression, vars)
	}
	for _, mc := range p.Spec.MatchConditions {
		out.matchConditions = append(out.matchConditions, c.Compile(mc.Expression, vars, admissioncel.BoolResult))
	}
	patch := vars
	patch.PatchTypes = true
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			out.mutations = append(out.mutations, c.Compile(m.ApplyConfiguration.Expression, patch, admissioncel.ApplyResult))
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			out.mutations = append(out.mutations, c.Compile(m.JSONPatch.Expression, patch, admissioncel.JSONPatchResult))
		default:
			out.mutations = append(out.mutations, nil)
		}
	}
	return out
}
