package main

import (
	"context"
	"fmt"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/setpoint-dev/setpoint/internal/admission/noderestriction"
	"github.com/setpoint-dev/setpoint/internal/cluster"
)

func newUpCommand() *cobra.Command {
	var (
		f     apiFlags
		nodes int
		noCM  bool
		cm    controllerFlags
		nf    nodeFlags
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run a whole cluster in one process (API server on the embedded store, controller manager, scheduler, simulated nodes) and write a kubeconfig",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			api, err := f.options()
			if err != nil {
				return err
			}
			// As kubeadm sets up kube-apiserver: nodes are restricted to
			// their own objects.
			if !slices.Contains(api.DisableAdmissionPlugins, noderestriction.Name) && !slices.Contains(api.EnableAdmissionPlugins, noderestriction.Name) {
				api.EnableAdmissionPlugins = append(api.EnableAdmissionPlugins, noderestriction.Name)
			}
			if nodes < 0 {
				return fmt.Errorf("--nodes must be 0 or more, not %d", nodes)
			}
			if err := withFrontProxy(&api); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			opts := cluster.Options{APIServer: api, Nodes: nodes, Logger: log, NoControllerManager: noCM}
			if err := cm.apply(&opts.ControllerManager); err != nil {
				return err
			}
			if err := nf.apply(&opts.NodeAgent); err != nil {
				return err
			}
			c, err := cluster.Start(ctx, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			err = c.WaitReady(ctx, func(step string, after time.Duration) {
				fmt.Fprintf(out, "  %-28s %6.0f ms\n", step, float64(after.Microseconds())/1000)
			})
			if err == nil {
				fmt.Fprintf(out, "\nsetpoint is up at https://%s with %d node(s)\n\n", c.API.Addr(), nodes)
				fmt.Fprintf(out, "  export KUBECONFIG=%s\n", c.API.KubeconfigPath())
				fmt.Fprintf(out, "  kubectl get nodes\n\n")
				fmt.Fprintf(out, "That kubeconfig is the cluster's admin (system:masters). To work as a restricted identity:\n")
				fmt.Fprintf(out, "  kubectl create serviceaccount dev\n")
				fmt.Fprintf(out, "  kubectl create rolebinding dev --clusterrole=edit --serviceaccount=default:dev\n")
				fmt.Fprintf(out, "  kubectl --token=\"$(kubectl create token dev)\" get pods\n\n")
				fmt.Fprintf(out, "Press Ctrl-C to stop; the data stays in %s.\n", filepath.Dir(c.API.KubeconfigPath()))
			}
			return c.Wait()
		},
	}
	f.register(cmd, "./.setpoint")
	cmd.Flags().IntVar(&nodes, "nodes", 3, "number of simulated nodes")
	cmd.Flags().BoolVar(&noCM, "no-controller-manager", false,
		"leave the controllers out of this process (run \"setpoint controller-manager\" against its kubeconfig instead)")
	cm.register(cmd)
	nf.register(cmd)
	return cmd
}
