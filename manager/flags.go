package manager

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/webhook"
)

// Flags are the command-line settings every operator program takes: the
// cluster to reach, leader election, the metrics and health listeners, and
// the log level. A program sets the defaults it wants in the fields, calls
// Register, parses, then builds its Options:
//
//	f := manager.Flags{LeaderElectionNamespace: "default", MetricsAddr: manager.DefaultMetricsAddr,
//		HealthAddr: manager.DefaultHealthAddr}
//	f.Register(flag.CommandLine, "my-operator")
//	flag.Parse()
//	log := f.Logger()
//	opts, err := f.Options("my-operator", log)
type Flags struct {
	// Kubeconfig is a kubeconfig path; empty means $KUBECONFIG (its first
	// entry) or ~/.kube/config.
	Kubeconfig string
	// LeaderElect holds the Lease named by the program before acting, in
	// LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	// MetricsAddr and HealthAddr are the listeners ("0": off).
	MetricsAddr, HealthAddr string
	// WebhookAddr and WebhookCertDir configure the admission webhook
	// server (Options.Webhook): its listener and the directory of its
	// tls.crt and tls.key.
	WebhookAddr, WebhookCertDir string
	// Verbose logs at debug level.
	Verbose bool
}

// Register adds --kubeconfig, --leader-elect, --leader-elect-namespace,
// --metrics-addr, --health-addr, --webhook-addr, --webhook-cert-dir and
// -v to fs; the fields' current values
// are the defaults. lease names the program's leader-election Lease in
// the help text.
func (f *Flags) Register(fs *flag.FlagSet, lease string) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	fs.BoolVar(&f.LeaderElect, "leader-elect", f.LeaderElect,
		"hold the Lease "+lease+" before acting, so that one replica acts at a time")
	fs.StringVar(&f.LeaderElectionNamespace, "leader-elect-namespace", f.LeaderElectionNamespace, "namespace of the leader-election Lease")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", f.MetricsAddr, `address to serve /metrics on ("0": off)`)
	fs.StringVar(&f.HealthAddr, "health-addr", f.HealthAddr, `address to serve /healthz and /readyz on ("0": off)`)
	fs.StringVar(&f.WebhookAddr, "webhook-addr", f.WebhookAddr, "address to serve admission webhooks on (default "+webhook.DefaultAddr+")")
	fs.StringVar(&f.WebhookCertDir, "webhook-cert-dir", f.WebhookCertDir,
		"directory holding the webhook server's tls.crt and tls.key (default "+webhook.DefaultCertDir+")")
	fs.BoolVar(&f.Verbose, "v", f.Verbose, "log at debug level")
}

// Logger returns a text logger on stderr, at debug level with -v, else
// info.
func (f *Flags) Logger() *slog.Logger {
	level := slog.LevelInfo
	if f.Verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Options loads the kubeconfig and returns manager Options with the flags
// applied, the Lease named lease and the logger log. The caller may set
// more fields (a Scheme, say) before New.
func (f *Flags) Options(lease string, log *slog.Logger) (Options, error) {
	var cfg *rest.Config
	var err error
	if f.Kubeconfig == "" {
		cfg, err = rest.LoadDefault()
	} else {
		cfg, err = rest.ConfigFromKubeconfig(f.Kubeconfig, "")
	}
	if err != nil {
		return Options{}, fmt.Errorf("load kubeconfig: %w", err)
	}
	return Options{
		Config: cfg, MetricsAddr: f.MetricsAddr, HealthAddr: f.HealthAddr,
		LeaderElection: f.LeaderElect, LeaderElectionID: lease, LeaderElectionNamespace: f.LeaderElectionNamespace,
		Logger: log, Webhook: webhook.Options{Addr: f.WebhookAddr, CertDir: f.WebhookCertDir},
	}, nil
}

// SignalContext returns a context that ends at the first SIGINT or
// SIGTERM, for a program's graceful shutdown; stop releases the signals.
func SignalContext() (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
