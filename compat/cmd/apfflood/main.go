// Command apfflood measures the reference kube-apiserver (v1.37.2, package
// refcluster, its default API Priority and Fairness configuration) in the
// scenario of setpoint's BenchmarkPriorityAndFairnessFlood
// (internal/apiserver/flood_test.go), so that the two ratios can be put
// side by side: a server of 2 seats (--max-requests-inflight 1,
// --max-mutating-requests-inflight 1) and a 4 s request timeout (a 1 s
// queue wait limit); one ServiceAccount floods it with 400 loops of lists
// of 20 ConfigMaps, honouring Retry-After, from a process of its own at
// nice 19; a second tenant (another ServiceAccount, its own flow in the
// same priority level) reads one ConfigMap and a kube-system
// ServiceAccount renews a leader-election Lease, timed before the flood
// (quiet) and during it. It prints the p50/p99 of both, quiet and flooded,
// and their p99 ratios (issue 14 asks for at most 2).
//
// Two differences from the setpoint benchmark, both in kube-apiserver's
// favour: the timed clients run in this process, not in the server's (the
// benchmark's server shares its process with them), and untimed reads and
// renewals run for -warmup before the quiet ones are timed (kube-apiserver
// answers a new tenant's first reads in about 1 s each for some seconds
// after it reports ready, which would make its quiet p99 1 s).
//
// With -setpoint BIN it measures `setpoint apiserver` (BIN) the same way,
// a process of its own with the same limits and the same warm-up, so that
// both servers are timed by one harness with no client in the server's
// process.
//
// The executables are refcluster's (FindBinaries: the repository's .bin/,
// built on first use, or $SETPOINT_REFERENCE_BIN_DIR holding etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler).
//
//	cd compat && go run ./cmd/apfflood -runs 3
//	cd compat && go run ./cmd/apfflood -runs 3 -setpoint ../.bin/setpoint
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/internal/apfflood"
)

// floodEnv, when set, makes this executable the flooding child (package
// apfflood, the same flood as setpoint's benchmark); the value is the JSON
// of an apfflood.Order.
const floodEnv = "APFFLOOD_CHILD"

func main() {
	if order := os.Getenv(floodEnv); order != "" {
		os.Exit(apfflood.Child(order))
	}
	runs := flag.Int("runs", 3, "how many runs, each on a new cluster")
	samples := flag.Int("samples", 300, "timed reads and renewals, quiet and then flooded")
	workers := flag.Int("workers", 400, "the flood's concurrent loops")
	warmup := flag.Duration("warmup", 30*time.Second, "untimed reads and renewals before the quiet ones: kube-apiserver answers a new tenant's first reads slowly (about 1 s each, for the first 15-20 s after start on a loaded machine)")
	setpointBin := flag.String("setpoint", "", "measure `setpoint apiserver` from this executable, a process of its own with the same limits, instead of kube-apiserver")
	flag.Parse()
	for i := range *runs {
		if err := run(*setpointBin, *samples, *workers, *warmup); err != nil {
			slog.Error("apfflood", "run", i+1, "err", err)
			os.Exit(1)
		}
	}
}

func run(setpointBin string, samples, workers int, warmup time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name, s, stopServer, err := startServer(ctx, setpointBin)
	if err != nil {
		return err
	}
	defer stopServer()
	flooder, tenant, elector, err := setup(s)
	if err != nil {
		return err
	}
	read := func() (int, error) {
		code, _, err := tenant.do(http.MethodGet, "/api/v1/namespaces/tenant/configmaps/own", "")
		return code, err
	}
	elect := func() (int, error) { return renew(elector) }
	const pace = 10 * time.Millisecond
	for end := time.Now().Add(warmup); time.Now().Before(end); {
		if _, _, _, err := interleaved(10, pace, read, elect); err != nil {
			return err
		}
	}
	quietRead, quietElect, _, err := interleaved(samples, pace, read, elect)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(s.caFile)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	stop, err := apfflood.Start([]string{self}, floodEnv, apfflood.Order{URL: s.url, CA: ca, Token: flooder.token,
		Path: "/api/v1/namespaces/flood/configmaps", Workers: workers})
	if err != nil {
		return err
	}
	floodRead, floodElect, failures, err := interleaved(samples, pace, read, elect)
	counts, stopErr := stop()
	if err != nil {
		return err
	}
	if stopErr != nil {
		return stopErr
	}
	fmt.Printf("%s: flood %d served, %d refused with 429, %d other\n", name, counts.OK, counts.Rejected, counts.Other)
	fmt.Printf("  tenant read:   quiet p50 %v p99 %v; flooded p50 %v p99 %v max %v (%d failures); p99 ratio %.2f\n",
		p50(quietRead), p99(quietRead), p50(floodRead), p99(floodRead), floodRead[len(floodRead)-1], failures[0],
		float64(p99(floodRead))/float64(p99(quietRead)))
	fmt.Printf("  lease renewal: quiet p50 %v p99 %v; flooded p50 %v p99 %v (%d failures); p99 ratio %.2f\n",
		p50(quietElect), p99(quietElect), p50(floodElect), p99(floodElect), failures[1],
		float64(p99(floodElect))/float64(p99(quietElect)))
	return nil
}

// interleaved times n rounds of a then b (alternating, so that both see
// the same moments of the machine) and returns each one's sorted times
// and failures.
func interleaved(n int, pace time.Duration, a, b func() (int, error)) (sa, sb []time.Duration, failures [2]int, err error) {
	for range n {
		for i, op := range []func() (int, error){a, b} {
			begin := time.Now()
			code, err := op()
			if err != nil {
				return nil, nil, failures, err
			}
			if code != http.StatusOK {
				failures[i]++
			}
			if i == 0 {
				sa = append(sa, time.Since(begin))
			} else {
				sb = append(sb, time.Since(begin))
			}
		}
		time.Sleep(pace)
	}
	slices.Sort(sa)
	slices.Sort(sb)
	return sa, sb, failures, nil
}

func p99(sorted []time.Duration) time.Duration { return sorted[(len(sorted)*99)/100] }
func p50(sorted []time.Duration) time.Duration { return sorted[len(sorted)/2] }

// startServer starts the server measured: kube-apiserver (with etcd), or
// setpoint when setpointBin is set, both with 2 seats and a 4 s request
// timeout.
func startServer(ctx context.Context, setpointBin string) (name string, s *server, stop func(), err error) {
	if setpointBin != "" {
		s, stop, err = startSetpoint(ctx, setpointBin)
		return "setpoint", s, stop, err
	}
	c, err := refcluster.Start(ctx, refcluster.Options{APIServerArgs: []string{
		"--max-requests-inflight=1", "--max-mutating-requests-inflight=1", "--request-timeout=4s",
	}})
	if err != nil {
		return "", nil, nil, err
	}
	return "kube-apiserver", &server{url: c.URL(), caFile: c.CAFile(), admin: c.Token()}, func() { _ = c.Stop() }, nil
}
