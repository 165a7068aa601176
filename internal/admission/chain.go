package admission

import (
	"context"
	"fmt"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Plugin is one admission plugin. It is a Mutator, a Validator or both.
type Plugin interface {
	// Name is the plugin's name in kube-apiserver (--enable-admission-plugins).
	Name() string
}

// Mutator is a plugin of the mutating phase: it may change a.Object. It
// runs once per write attempt (the server retries a lost compare-and-swap);
// the Txn gives back what it took when the attempt is not stored.
type Mutator interface {
	Plugin
	Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error)
}

// Validator is a plugin of the validating phase, which runs after the
// strategy's validation: it must not change a.Object.
type Validator interface {
	Plugin
	Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error)
}

// Chain is an ordered set of plugins: Admit runs the mutators in order,
// Validate the validators in order; the first refusal ends the phase.
type Chain struct {
	plugins    []Plugin
	mutators   []Mutator
	validators []Validator
}

// NewChain returns the chain of plugins in the order given. A plugin that
// is neither a Mutator nor a Validator is an error.
func NewChain(plugins ...Plugin) (*Chain, error) {
	c := &Chain{}
	seen := map[string]bool{}
	for _, p := range plugins {
		if seen[p.Name()] {
			return nil, fmt.Errorf("admission plugin %s given twice", p.Name())
		}
		seen[p.Name()] = true
		m, isM := p.(Mutator)
		v, isV := p.(Validator)
		if !isM && !isV {
			return nil, fmt.Errorf("admission plugin %s neither admits nor validates", p.Name())
		}
		if isM {
			c.mutators = append(c.mutators, m)
		}
		if isV {
			c.validators = append(c.validators, v)
		}
		c.plugins = append(c.plugins, p)
	}
	return c, nil
}

// Names lists the chain's plugins in order.
func (c *Chain) Names() []string {
	out := make([]string, len(c.plugins))
	for i, p := range c.plugins {
		out[i] = p.Name()
	}
	return out
}

// Admit runs the mutating phase. On a refusal the Txns of the plugins that
// ran are reverted; otherwise the joined Txn is returned.
func (c *Chain) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	var txns []*registry.Txn
	for _, p := range c.mutators {
		t, err := p.Admit(ctx, env, a)
		if err != nil {
			Join(txns...).Finish(false)
			return nil, err
		}
		txns = append(txns, t)
	}
	return Join(txns...), nil
}

// Validate runs the validating phase, as Admit.
func (c *Chain) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	var txns []*registry.Txn
	for _, p := range c.validators {
		t, err := p.Validate(ctx, env, a)
		if err != nil {
			Join(txns...).Finish(false)
			return nil, err
		}
		txns = append(txns, t)
	}
	return Join(txns...), nil
}

// Join is a Txn finishing each of txns in order (nil when all are).
func Join(txns ...*registry.Txn) *registry.Txn {
	var live []*registry.Txn
	for _, t := range txns {
		if t != nil {
			live = append(live, t)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return &registry.Txn{
		Commit: func() {
			for _, t := range live {
				t.Finish(true)
			}
		},
		Revert: func() {
			for _, t := range live {
				t.Finish(false)
			}
		},
	}
}
