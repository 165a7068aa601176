// Command refcluster runs the reference Kubernetes control plane of package
// refcluster (etcd, kube-apiserver, optionally kube-controller-manager and
// kube-scheduler, v1.37.2) in the foreground on fixed loopback ports, for
// people and tools that want one to query by hand. SIGINT or SIGTERM stops
// it (kube-apiserver before etcd); its data stays in -dir, and a later run
// on the same -dir with the same ports continues on it. It exits, after
// stopping the rest, if a component dies.
//
// With -binaries it only builds the executables (once: they are cached in
// the repository's .bin/) and prints their paths.
//
//	go run ./cmd/refcluster -dir /tmp/ref -kubeconfig /tmp/ref.kubeconfig -controller-manager
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

func main() {
	if err := run(); err != nil {
		slog.Error("refcluster", "err", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts       refcluster.Options
		binDir     string
		kubeconfig string
	)
	flag.StringVar(&opts.Dir, "dir", "", "cluster directory (credentials, etcd data, logs); required")
	flag.IntVar(&opts.Ports.APIServer, "port", 16443, "kube-apiserver's secure port")
	flag.IntVar(&opts.Ports.EtcdClient, "etcd-port", 16379, "etcd's client port")
	flag.IntVar(&opts.Ports.EtcdPeer, "etcd-peer-port", 16380, "etcd's peer port")
	flag.IntVar(&opts.Ports.ControllerManager, "controller-manager-port", 16257, "kube-controller-manager's secure port")
	flag.IntVar(&opts.Ports.Scheduler, "scheduler-port", 16259, "kube-scheduler's secure port")
	flag.StringVar(&opts.AdvertiseAddress, "advertise-address", "", "kube-apiserver's --advertise-address (default: this host's first non-loopback IPv4 address, else 10.0.0.1)")
	flag.BoolVar(&opts.ControllerManager, "controller-manager", false, "run kube-controller-manager")
	flag.BoolVar(&opts.Scheduler, "scheduler", false, "run kube-scheduler")
	flag.StringVar(&binDir, "bin-dir", "", "directory holding etcd, kube-apiserver, kube-controller-manager and kube-scheduler (default: built from the repository)")
	flag.StringVar(&kubeconfig, "kubeconfig", "", "also write the admin kubeconfig here")
	printBinaries := flag.Bool("binaries", false, "only find (building them if needed) and print the executables, then exit")
	flag.Parse()
	if *printBinaries {
		b, err := refcluster.FindBinaries()
		if err != nil {
			return err
		}
		fmt.Printf("%s\n%s\n%s\n%s\n", b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler)
		return nil
	}
	if opts.Dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if binDir != "" {
		b, err := refcluster.BinariesIn(binDir)
		if err != nil {
			return err
		}
		opts.Binaries = &b
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := refcluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	if kubeconfig != "" {
		if err := copyFile(c.Kubeconfig(), kubeconfig); err != nil {
			return errors.Join(err, c.Stop())
		}
	}
	slog.Info("reference cluster ready", "url", c.URL(), "kubeconfig", c.Kubeconfig(), "logs", c.Dir()+"/logs")
	err = c.Wait(ctx)
	slog.Info("stopping")
	return errors.Join(err, c.Stop())
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
