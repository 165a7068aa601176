package manager_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
)

// The flags keep the program's defaults, parse into Options, and load the
// kubeconfig named (or the default one); a missing kubeconfig is an error
// that says so.
func TestFlags(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := manager.Flags{LeaderElectionNamespace: "ops", MetricsAddr: "0", HealthAddr: "0"}
	fs := flag.NewFlagSet("op", flag.ContinueOnError)
	f.Register(fs, "my-operator")
	if err := fs.Parse([]string{"--kubeconfig", srv.Kubeconfig, "--leader-elect", "-v",
		"--webhook-addr", "127.0.0.1:9444", "--webhook-cert-dir", "/certs"}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.Options("my-operator", f.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if !opts.LeaderElection || opts.LeaderElectionID != "my-operator" || opts.LeaderElectionNamespace != "ops" ||
		opts.MetricsAddr != "0" || opts.HealthAddr != "0" || opts.Config == nil || opts.Config.Host != srv.RESTConfig(t).Host ||
		opts.Webhook.Addr != "127.0.0.1:9444" || opts.Webhook.CertDir != "/certs" {
		t.Errorf("options = %+v", opts)
	}
	if !f.Logger().Enabled(t.Context(), -4) {
		t.Error("-v does not log at debug level")
	}

	// No --kubeconfig: $KUBECONFIG.
	t.Setenv("KUBECONFIG", srv.Kubeconfig)
	if opts, err := (&manager.Flags{}).Options("x", nil); err != nil || opts.Config.Host != srv.RESTConfig(t).Host {
		t.Errorf("default kubeconfig: %v %+v", err, opts.Config)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := (&manager.Flags{Kubeconfig: missing}).Options("x", nil); err == nil || !strings.Contains(err.Error(), "load kubeconfig") {
		t.Errorf("missing kubeconfig: %v", err)
	}
}
