package validatingadmissionpolicy

import (
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
)

// compiled is one policy, compiled.
type compiled struct {
	generation int64
	policy     *admissionregistrationv1.ValidatingAdmissionPolicy
	// err is a failure to build the policy's environment.
	err              error
	compiler         *policycel.Compiler
	matchConditions  []*policycel.Compiled
	conditionNames   []string
	validations      []*policycel.Compiled
	messages         []*policycel.Compiled // nil where a validation has no messageExpression
	auditAnnotations []*policycel.Compiled
}

// compiledCache holds the compiled policies by UID; a policy is compiled
// again when its generation changes (the spec a compiled policy keeps is
// the one of its generation; it is never changed once shared).
type compiledCache struct {
	mu sync.Mutex
	m  map[types.UID]*compiled
}

func (c *compiledCache) get(p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp, ok := c.m[p.UID]; ok && cp.generation == p.Generation && p.Generation != 0 {
		return cp
	}
	cp := compile(p)
	if c.m == nil {
		c.m = map[types.UID]*compiled{}
	}
	c.m[p.UID] = cp
	return cp
}

// prune forgets the policies no longer stored.
func (c *compiledCache) prune(live map[types.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.m {
		if !live[uid] {
			delete(c.m, uid)
		}
	}
}

// compile compiles a policy as kube-apiserver does: variables, match
// conditions, validations and audit annotations with params (when the
// policy has a paramKind) and the authorizer; message expressions without
// the authorizer.
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiled {
	out := &compiled{generation: p.Generation, policy: p}
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
