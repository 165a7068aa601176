package refcluster

import (
	"context"
	"testing"
)

// StartT starts a cluster for the test t and stops it when the test ends
// (a failed start fails the test). When the test failed, the end of each
// component's log is printed before the directory goes.
func StartT(t testing.TB, opts Options) *Cluster {
	t.Helper()
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.procs {
				t.Logf("refcluster: %s log ends:\n%s", p.name, p.tail(40))
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("refcluster: stop: %v", err)
		}
	})
	return c
}
