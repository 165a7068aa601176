package compat

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/testenv"
)

// env is what every test of the suite shares: both servers, the
// allowlist, the run's sink of differences, and the resources each serves.
var env struct {
	ref, sp *difftest.Side
	allow   *difftest.Allowlist
	sink    *difftest.Sink
	// refRes and spRes are the resources (and subresources) each side's
	// discovery lists, by id ("apps/v1/deployments", "core/v1/pods/status").
	refRes, spRes map[string]apiResource
	// kubeconfigs holds each side's admin kubeconfig (its text), by name.
	kubeconfigs map[string]string
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("compat: skipped in -short mode (starts the reference kube-apiserver)")
		return 0
	}
	allow, err := difftest.LoadAllowlist("testdata/allowlist.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env.allow, env.sink = allow, difftest.NewSink()

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	refKubeconfig, stopRef, err := startReference(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: starting the reference:", err)
		return 1
	}
	defer stopRef()
	sp, err := testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: starting setpoint:", err)
		return 1
	}
	defer sp.Stop() //nolint:errcheck // best effort at exit

	if env.ref, err = difftest.SideFromKubeconfig("reference", refKubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env.sp, err = difftest.SideFromKubeconfig("setpoint", sp.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, side := range []*difftest.Side{env.ref, env.sp} {
		if err := side.LearnUser(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	env.kubeconfigs = map[string]string{}
	for name, path := range map[string]string{env.ref.Name: refKubeconfig, env.sp.Name: sp.Kubeconfig} {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		env.kubeconfigs[name] = string(b)
	}
	if env.refRes, err = discoverResources(ctx, env.ref); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env.spRes, err = discoverResources(ctx, env.sp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env.allow.SetServed(served)
	fmt.Printf("compat: reference and setpoint ready in %v (%d and %d resources)\n",
		time.Since(start).Round(time.Millisecond), len(env.refRes), len(env.spRes))

	code := m.Run()

	if path := os.Getenv("COMPAT_REPORT"); path != "" {
		if err := env.sink.WriteFile(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if code == 0 && fullRun() {
		if unused := env.allow.Unused(); len(unused) > 0 {
			fmt.Printf("compat: allowlist entries that matched no difference (remove them):\n  %s\n", strings.Join(unused, "\n  "))
			code = 1
		}
	}
	return code
}

// startReference starts the reference cluster, or takes the one
// $SETPOINT_REFERENCE_KUBECONFIG names (refcluster.Use); it returns the
// admin kubeconfig's path and how to stop what it started.
func startReference(ctx context.Context) (string, func(), error) {
	return refcluster.Use(ctx, refcluster.Options{EtcdArgs: []string{"--unsafe-no-fsync"}})
}

// fullRun reports whether every test ran (no -run or -skip filter), so
// that an allowlist entry matching nothing is stale.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// served reports whether setpoint serves the resource id; when it does not,
// the test skips the resource's cases: TestServed reports it once.
func served(id string) bool {
	_, ok := env.spRes[id]
	return ok
}
