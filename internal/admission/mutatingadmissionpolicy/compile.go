package mutatingadmissionpolicy

import (
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
)

// compiled is one policy, compiled.
type compiled struct {
	generation      int64
	policy          *admissionregistrationv1.MutatingAdmissionPolicy
	err             error
	compiler        *policycel.Compiler
	matchConditions []*policycel.Compiled
	mutations       []*policycel.Compiled
}

type compiledCache struct {
	mu sync.Mutex
	m  map[types.UID]*compiled
}

func (c *compiledCache) get(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiled {
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

func (c *compiledCache) prune(live map[types.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.m {
		if !live[uid] {
			delete(c.m, uid)
		}
	}
}

// compile compiles a policy as kube-apiserver does: variables and match
// conditions with params (when it has a paramKind) and the authorizer;
// mutations also with the patch types (Object, JSONPatch).
func compile(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiled {
	out := &compiled{generation: p.Generation, policy: p}
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
