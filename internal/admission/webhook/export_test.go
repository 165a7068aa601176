package webhook

import (
	"context"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TestSource exposes a validating configuration source to the tests.
type TestSource struct{ s source }

// Hooks returns the compiled webhooks, as pointers the test compares.
func (t *TestSource) Hooks(ctx context.Context, env registry.Env) ([]any, error) {
	hs, err := t.s.hooks(ctx, env)
	out := make([]any, len(hs))
	for i, h := range hs {
		out[i] = h
	}
	return out, err
}
