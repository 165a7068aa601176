// Command setpoint runs a Kubernetes-compatible control plane.
//
//	setpoint up                   the whole cluster in one process: API server on the
//	                              embedded store, controller manager, scheduler, N nodes
//	setpoint apiserver            the API server only
//	setpoint controller-manager   the controllers, against any kubeconfig
//	setpoint scheduler            the scheduler, against any kubeconfig
//	setpoint node                 N simulated nodes, against any kubeconfig
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "setpoint",
		Short:         "A Kubernetes-compatible control plane in one binary",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newUpCommand(), newAPIServerCommand(),
		newControllerManagerCommand(), newSchedulerCommand(), newNodeCommand())
	return root
}

// newLogger builds the structured logger every command writes to stderr.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
