package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/setpoint-dev/setpoint/manager"
)

// result is how a component's manager ended.
type result struct {
	name string
	err  error
}

// maxRestartDelay caps the wait before a component is started again.
const maxRestartDelay = 10 * time.Second

// restartable reports whether r is a component that lost its leadership
// while the cluster runs (its renewals missed the deadline: a starved CPU,
// a paused process), and so is started again rather than stopping the
// cluster.
func (c *Cluster) restartable(ctx context.Context, r result) bool {
	return ctx.Err() == nil && errors.Is(r.err, manager.ErrLeaderElectionLost) && c.remake[r.name] != nil
}

// restart waits a back-off (1 s, doubling with each restart of the same
// component, at most maxRestartDelay), builds the component's manager
// anew and runs it until it stops; it runs as the component's goroutine
// in run.
func (c *Cluster) restart(ctx context.Context, name string, n int) result {
	delay := min(time.Second<<min(n-1, 4), maxRestartDelay)
	c.log.Warn("component lost its leadership; starting it again", "component", name, "restart", n, "after", delay)
	select {
	case <-ctx.Done():
		return result{name, nil}
	case <-time.After(delay):
	}
	m, err := c.remake[name]()
	if err != nil {
		return result{name, fmt.Errorf("restart after losing leadership: %w", err)}
	}
	return result{name, m.Start(ctx)}
}
