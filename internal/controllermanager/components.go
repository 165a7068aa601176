package controllermanager

import (
	"fmt"
	"os"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/scheduler"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// SchedulerOptions configure NewScheduler.
type SchedulerOptions struct {
	Common
	Scheduler scheduler.Options
}

// NewScheduler builds the scheduler on a manager electing on
// kube-system/kube-scheduler.
func NewScheduler(opts SchedulerOptions) (*manager.Manager, error) {
	mgr, err := newManager(opts.Common, "kube-scheduler", nil, schedulerLimits(opts.Common))
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
// manager without leader election (Common.Election is ignored). Unless
// opts.Agent.ClientCA is set, the nodes' kubelet endpoint trusts the CA
// the configuration trusts for the API server (the cluster CA, which
// signs the API server's kubelet client certificate).
func NewNodes(opts NodesOptions) (*manager.Manager, error) {
	opts.Election.Disabled = true
	if len(opts.Agent.ClientCA) == 0 && opts.Config != nil {
		ca, err := clusterCA(opts.Config)
		if err != nil {
			return nil, err
		}
		opts.Agent.ClientCA = ca
	}
	mgr, err := newManager(opts.Common, "node-agent", nil, nodeAgentLimits(opts.Common, opts.Agent))
	if err != nil {
		return nil, err
	}
	if err := nodeagent.Add(mgr, opts.Agent); err != nil {
		return nil, fmt.Errorf("node agent: %w", err)
	}
	return mgr, nil
}

// clusterCA is the PEM CA bundle a client configuration trusts.
func clusterCA(cfg *rest.Config) ([]byte, error) {
	if len(cfg.TLS.CAData) > 0 || cfg.TLS.CAFile == "" {
		return cfg.TLS.CAData, nil
	}
	b, err := os.ReadFile(cfg.TLS.CAFile)
	if err != nil {
		return nil, fmt.Errorf("node agent: read the cluster CA: %w", err)
	}
	return b, nil
}
