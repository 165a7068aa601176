package controllermanager

import (
	"fmt"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/scheduler"
	"github.com/setpoint-dev/setpoint/manager"
)

// SchedulerOptions configure NewScheduler.
type SchedulerOptions struct {
	Common
	Scheduler scheduler.Options
}

// NewScheduler builds the scheduler on a manager electing on
// kube-system/kube-scheduler.
func NewScheduler(opts SchedulerOptions) (*manager.Manager, error) {
	mgr, err := newManager(opts.Common, "kube-scheduler")
	if err != nil {
		return nil, err
	}
	if err := scheduler.Add(mgr, opts.Scheduler); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	return mgr, nil
}

// NodesOptions configure NewNodes.
type NodesOptions struct {
	Common
	Agent nodeagent.Options
}

// NewNodes builds a node agent simulating opts.Agent.Count nodes on a
// manager without leader election (Common.Election is ignored).
func NewNodes(opts NodesOptions) (*manager.Manager, error) {
	opts.Election.Disabled = true
	mgr, err := newManager(opts.Common, "node-agent")
	if err != nil {
		return nil, err
	}
	if err := nodeagent.Add(mgr, opts.Agent); err != nil {
		return nil, fmt.Errorf("node agent: %w", err)
	}
	return mgr, nil
}
