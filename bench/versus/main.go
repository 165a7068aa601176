package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// allWorkloads in the order they run on a side.
var allWorkloads = []string{"creates", "lists", "informer", "watch", "informer-large"}

type config struct {
	workloads, sides      string
	rounds                int
	objects, largeObjects int
	writers, watchers     []int
	watchClients          int
	watchFor              time.Duration
	reps                  int
	setpointBin, jsonOut  string
	setpointFlags         string
	markdown, quick       bool
}

func main() {
	var c config
	var writers, watchers string
	flag.StringVar(&c.workloads, "workloads", strings.Join(allWorkloads, ","), "workloads to run, comma-separated, in this order: "+strings.Join(allWorkloads, ", "))
	flag.StringVar(&c.sides, "sides", "reference,setpoint", "sides to run: reference (etcd + kube-apiserver), setpoint")
	flag.IntVar(&c.rounds, "rounds", 1, "rounds; each starts a fresh server of every side and runs every workload on it, the side that goes first alternating")
	flag.IntVar(&c.objects, "objects", 10000, "ConfigMaps per create run, and listed and synced by the lists and informer workloads")
	flag.IntVar(&c.largeObjects, "large-objects", 100000, "ConfigMaps the informer-large workload loads (64 writers) and syncs")
	flag.StringVar(&writers, "writers", "16,64", "writer counts of the creates workload, comma-separated")
	flag.StringVar(&watchers, "watchers", "100,500,2000", "watcher counts of the watch workload, comma-separated")
	flag.IntVar(&c.watchClients, "watch-clients", 1, "client-go clients the watchers are spread over (each its own HTTP/2 connection)")
	flag.DurationVar(&c.watchFor, "watch-duration", 10*time.Second, "how long the single writer updates the watched object, per watcher count")
	flag.IntVar(&c.reps, "reps", 5, "repetitions of each list and of the informer sync of -objects within a run (their median is the run's figure)")
	flag.StringVar(&c.setpointBin, "setpoint-bin", "", "setpoint executable (default: built from this repository)")
	flag.StringVar(&c.setpointFlags, "setpoint-flags", "", "extra flags of `setpoint apiserver`, space-separated (e.g. \"--storage memory\")")
	flag.StringVar(&c.jsonOut, "json", "", "also write every run's figures and the summary to this file")
	flag.BoolVar(&c.markdown, "markdown", false, "also print the summary as a Markdown table (the docs/BENCHMARKS.md layout)")
	flag.BoolVar(&c.quick, "quick", false, "small sizes, to check the harness: 1,000 objects, 5,000 for informer-large, watchers 10,50, 2 s of writes, 2 reps (explicit flags still win)")
	flag.Parse()
	if c.quick {
		applyQuick(&c, &watchers)
	}
	var err error
	if c.writers, err = parseInts(writers); err != nil {
		fatal(fmt.Errorf("-writers: %w", err))
	}
	if c.watchers, err = parseInts(watchers); err != nil {
		fatal(fmt.Errorf("-watchers: %w", err))
	}
	if err := runBench(c); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench-versus:", err)
	os.Exit(1)
}

// applyQuick lowers every size the command line did not set.
func applyQuick(c *config, watchers *string) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := map[string]func(){
		"objects":        func() { c.objects = 1000 },
		"large-objects":  func() { c.largeObjects = 5000 },
		"watchers":       func() { *watchers = "10,50" },
		"watch-duration": func() { c.watchFor = 2 * time.Second },
		"reps":           func() { c.reps = 2 },
	}
	for name, apply := range quick {
		if !set[name] {
			apply()
		}
	}
}

// parseInts reads a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		if n <= 0 {
			return nil, fmt.Errorf("%q: not positive", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func runBench(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	workloads, err := pickWorkloads(c.workloads)
	if err != nil {
		return err
	}
	sides, err := makeSides(c)
	if err != nil {
		return err
	}
	logf("machine: %s", machine())
	b := &bench{c: c, workloads: workloads}
	var runs []run
	for round := 1; round <= c.rounds; round++ {
		order := sides
		if round%2 == 0 && len(sides) == 2 { // alternate which side goes first
			order = []side{sides[1], sides[0]}
		}
		for _, s := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r := b.runSide(ctx, s, round)
			runs = append(runs, r)
		}
	}
	sums := summarize(b.figures(), runs)
	fmt.Println()
	logf("machine: %s", machine())
	printTable(os.Stdout, sums, c.rounds)
	if c.markdown {
		fmt.Println()
		printMarkdown(os.Stdout, sums)
	}
	failed := 0
	for _, r := range runs {
		for _, e := range r.Errors {
			fmt.Printf("round %d, %s: %s\n", r.Round, r.Side, e)
			failed++
		}
	}
	if c.jsonOut != "" {
		out, err := json.MarshalIndent(map[string]any{"machine": machine(), "runs": runs, "summary": jsonSummaries(sums)}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, out, 0o644); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d workload run(s) failed", failed)
	}
	return nil
}

func pickWorkloads(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range splitList(s) {
		found := false
		for _, w := range allWorkloads {
			found = found || w == name
		}
		if !found {
			return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(allWorkloads, ", "))
		}
		out[name] = true
	}
	if len(out) == 0 {
		return nil, errors.New("no workloads")
	}
	return out, nil
}

// makeSides finds or builds what the requested sides need.
func makeSides(c config) ([]side, error) {
	var sides []side
	for _, name := range splitList(c.sides) {
		switch name {
		case sideReference:
			logf("finding the reference binaries (a first build takes minutes)")
			bins, err := refcluster.FindBinaries()
			if err != nil {
				return nil, err
			}
			sides = append(sides, referenceSide(&bins))
		case sideSetpoint:
			bin := c.setpointBin
			if bin == "" {
				root, err := repoRoot()
				if err != nil {
					return nil, err
				}
				if bin, err = buildSetpoint(root); err != nil {
					return nil, err
				}
			}
			sides = append(sides, setpointSide(bin, strings.Fields(c.setpointFlags)...))
		default:
			return nil, fmt.Errorf("unknown side %q", name)
		}
	}
	if len(sides) == 0 {
		return nil, errors.New("no sides")
	}
	return sides, nil
}

// machine describes where the figures come from.
func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d CPUs, load average %s, %s", host, runtime.NumCPU(), loadAverage(), runtime.Version())
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}
