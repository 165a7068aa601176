// Package conversion is the differential test of CRD conversion webhooks:
// the same Widget CRD, converted by the same real HTTPS webhook on
// loopback, on kube-apiserver v1.37.2 and on setpoint; reads, lists and
// writes through a good webhook, and the Status of a failing one, are
// compared after normalization.
//
// The reference is the running kube-apiserver named by
// SETPOINT_REFERENCE_KUBECONFIG (an admin kubeconfig), or, without it, one
// started by refcluster for the run (refcluster.Use). The test creates the namespace
// conversion-compat and the CRD widgets.conversion.setpoint.test there and
// deletes both when done.
package conversion

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/testenv"
)

var ref, sp *difftest.Side

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("compat/conversion: skipped in -short mode (needs the reference kube-apiserver)")
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kubeconfig, stop, err := refcluster.Use(ctx, refcluster.Options{EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat/conversion: the reference:", err)
		return 1
	}
	defer stop()
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat/conversion: starting setpoint:", err)
		return 1
	}
	defer env.Stop() //nolint:errcheck // best effort at exit
	if ref, err = difftest.SideFromKubeconfig("reference", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if sp, err = difftest.SideFromKubeconfig("setpoint", env.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
