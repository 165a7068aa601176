// Command setpoint runs a Kubernetes-compatible control plane.
//
//	setpoint up          the whole control plane on the embedded store
//	setpoint apiserver   the API server only
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
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
	root.AddCommand(newServeCommand("up", "./.setpoint", "127.0.0.1:6443",
		"Run the control plane on the embedded store and write a kubeconfig", true))
	root.AddCommand(newServeCommand("apiserver", "", "127.0.0.1:6443",
		"Run the API server only", false))
	return root
}

type serveFlags struct {
	dataDir, listen, storage, logLevel string
}

func newServeCommand(name, defaultDir, defaultListen, short string, printUsage bool) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dataDir == "" {
				return errors.New("--data-dir is required")
			}
			return serve(cmd, f, printUsage)
		},
	}
	cmd.Flags().StringVar(&f.dataDir, "data-dir", defaultDir, "directory for the store, credentials and kubeconfig")
	cmd.Flags().StringVar(&f.listen, "listen", defaultListen, "address to serve HTTPS on (host:port; port 0 picks a free one)")
	cmd.Flags().StringVar(&f.storage, "storage", controlplane.StorageBolt, "storage engine: bolt (durable, default) or memory")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags, printUsage bool) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	dir, err := filepath.Abs(f.dataDir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := controlplane.NewAPIServer(controlplane.Options{DataDir: dir, Listen: f.listen, Storage: f.storage, Logger: log})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-srv.Ready():
	}
	if printUsage {
		printHowToUse(cmd, srv)
	}
	return <-done
}

func printHowToUse(cmd *cobra.Command, srv *apiserver.Server) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "setpoint is up at https://%s\n\n", srv.Addr())
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", srv.KubeconfigPath())
	fmt.Fprintf(out, "  kubectl get namespaces\n\n")
	fmt.Fprintf(out, "Press Ctrl-C to stop; the data stays in %s.\n", filepath.Dir(srv.KubeconfigPath()))
}
