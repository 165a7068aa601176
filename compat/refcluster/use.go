package refcluster

import (
	"context"
	"fmt"
	"os"
)

// ReferenceEnv names a running reference's admin kubeconfig. With it set,
// Use hands out that cluster instead of starting one. A shared reference
// holds other users' objects, so it suits tests that create and compare
// only their own (go test -run TestCELRules), not a full run of the suite.
const ReferenceEnv = "SETPOINT_REFERENCE_KUBECONFIG"

// Use returns the admin kubeconfig of the reference a test binary compares
// with: the running cluster $SETPOINT_REFERENCE_KUBECONFIG names, else a
// cluster started now with opts. stop ends what Use started (nothing for a
// running cluster). A test never skips for want of a reference: it starts
// one.
func Use(ctx context.Context, opts Options) (kubeconfig string, stop func(), err error) {
	if path := os.Getenv(ReferenceEnv); path != "" {
		fmt.Printf("refcluster: using the running reference of %s\n", path)
		return path, func() {}, nil
	}
	c, err := Start(ctx, opts)
	if err != nil {
		return "", nil, err
	}
	return c.Kubeconfig(), func() { _ = c.Stop() }, nil
}
