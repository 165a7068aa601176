package apiserver

import (
	"context"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// admitter returns the mutating admission of one resource's writes: the
// server's admission chain (Config.Admission, package admission), then the
// kind's own (registry.Resource.Admit, not on deletes), which completes
// what kube-apiserver's REST storage completes after admission (a
// Service's cluster IP).
func (s *Server) admitter(res *registry.Resource) func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
	env, chain := s.env(), s.cfg.Admission
	return func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
		t, err := chain.Admit(ctx, env, a)
		if err != nil {
			return nil, err
		}
		if res.Admit == nil || a.Operation == registry.Delete {
			return t, nil
		}
		kind, err := res.Admit(ctx, env, a)
		if err != nil {
			t.Finish(false)
			return nil, err
		}
		return admission.Join(t, kind), nil
	}
}

// validator returns the validating admission of one resource's writes,
// which runs after the strategy's validation: the kind's own
// (registry.Resource.AdmitValidate, creates and updates only), then the
// chain's validating plugins (deletes too, as kube-apiserver's),
// ResourceQuota last as in kube-apiserver.
func (s *Server) validator(res *registry.Resource) func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
	env, chain := s.env(), s.cfg.Admission
	return func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
		var kind *registry.Txn
		if res.AdmitValidate != nil && a.Operation != registry.Delete {
			t, err := res.AdmitValidate(ctx, env, a)
			if err != nil {
				return nil, err
			}
			kind = t
		}
		t, err := chain.Validate(ctx, env, a)
		if err != nil {
			kind.Finish(false)
			return nil, err
		}
		return admission.Join(kind, t), nil
	}
}
