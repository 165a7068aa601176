package apiserver_test

import (
	"os"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apfflood"
	"github.com/setpoint-dev/setpoint/rest"
)

// floodEnv, when set in the environment of this test binary, makes it the
// flooding client (TestMain): the value is the JSON of an apfflood.Order.
const floodEnv = "SETPOINT_TEST_FLOOD"

// floodOrder is the flood of one test: the server of kubeconfig, flooded
// by token's identity with workers loops of GETs of path.
type floodOrder struct {
	Kubeconfig, Token, Path string
	Workers                 int
}

// startFlood starts this test binary as the flooding tenant (package
// apfflood, at nice 19); it returns once the flood got its first 429 (its
// queues overflow) and gives the function that stops it and returns its
// counts.
func startFlood(t testing.TB, o floodOrder) (stop func() apfflood.Counts) {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(o.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ca := cfg.TLS.CAData
	if len(ca) == 0 && cfg.TLS.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLS.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	stopFlood, err := apfflood.Start([]string{os.Args[0], "-test.run=^$"}, floodEnv,
		apfflood.Order{URL: cfg.Host, CA: ca, Token: o.Token, Path: o.Path, Workers: o.Workers})
	if err != nil {
		t.Fatal(err)
	}
	return func() apfflood.Counts {
		c, err := stopFlood()
		if err != nil {
			t.Error(err)
		}
		return c
	}
}
