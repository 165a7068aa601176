package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

type options struct {
	specs, subset, only string
	parallel, nodes     int
	timeout             time.Duration
	out                 string
	buildOnly           bool
	kubeconfig          string
	setpoint            string
	kubectl             string
	reference           bool
}

func main() {
	var o options
	flag.StringVar(&o.specs, "specs", "specs-v1.37.txt", "the spec list (file:line<TAB>name per line)")
	flag.StringVar(&o.subset, "subset", "", "run only the specs this list names (e.g. fast-v1.37.txt, the CI subset)")
	flag.StringVar(&o.only, "only", "", "run only the specs whose file:line or name matches this regular expression")
	flag.IntVar(&o.parallel, "parallel", 3, "e2e.test processes at once")
	flag.IntVar(&o.nodes, "nodes", 3, "simulated nodes")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "per-spec timeout (the [Slow] specs wait minutes by design)")
	flag.StringVar(&o.out, "out", "", "directory for the JUnit report, results and outputs (default: a new temporary directory)")
	flag.BoolVar(&o.buildOnly, "build-only", false, "only build e2e.test into .bin/ and print its path")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this running cluster instead of starting `setpoint up`")
	flag.StringVar(&o.setpoint, "setpoint", "", "the setpoint binary (default: built from the repository)")
	flag.StringVar(&o.kubectl, "kubectl", "", "kubectl for the suite's sig-cli specs (default: $KUBECTL, else kubectl on PATH)")
	flag.BoolVar(&o.reference, "reference", false, "also run the specs on the reference (etcd, kube-apiserver, kube-controller-manager, kube-scheduler v1.37.2 and KWOK, from .bin/ or $SETPOINT_REFERENCE_BIN_DIR) and print both")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// run reports whether any spec did not pass.
func run(ctx context.Context, o options) (failed bool, err error) {
	root, err := repoRoot()
	if err != nil {
		return false, err
	}
	e2eTest, err := buildE2ETest(root)
	if err != nil {
		return false, err
	}
	if o.buildOnly {
		fmt.Println(e2eTest)
		return false, nil
	}
	specs, err := selectSpecs(o)
	if err != nil {
		return false, err
	}
	if o.kubectl == "" {
		o.kubectl = os.Getenv("KUBECTL")
	}
	if o.kubectl == "" {
		if o.kubectl, err = exec.LookPath("kubectl"); err != nil {
			return false, errors.New("kubectl not found: install it or set KUBECTL")
		}
	}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "setpoint-conformance-"); err != nil {
			return false, err
		}
	} else if err := os.MkdirAll(o.out, 0o755); err != nil {
		return false, err
	}
	r := &runner{e2eTest: e2eTest, kubectl: o.kubectl, timeout: o.timeout, parallel: o.parallel}
	sides := []string{"setpoint"}
	if o.reference {
		sides = append(sides, "reference")
	}
	var all [][]result
	for _, side := range sides {
		results, err := runSide(ctx, root, o, r, side, specs)
		if err != nil {
			return false, err
		}
		for _, res := range results {
			failed = failed || (side == "setpoint" && res.Status != "passed")
		}
		all = append(all, results)
	}
	if len(all) == 2 {
		fmt.Println("per SIG, setpoint beside the reference:")
		writeSIGComparison(os.Stdout, all[0], all[1])
	}
	return failed, ctx.Err()
}

// runSide starts one control plane (setpoint, or the reference with
// -kubeconfig unset) and runs the specs on it, writing its reports under
// o.out/<side>.
func runSide(ctx context.Context, root string, o options, r *runner, side string, specs []spec) ([]result, error) {
	begin := time.Now()
	out := filepath.Join(o.out, side)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	kubeconfig, target := o.kubeconfig, "cluster "+o.kubeconfig
	if kubeconfig == "" || side == "reference" {
		var c *cluster
		var err error
		if side == "reference" {
			logf("starting the reference (kube-apiserver, kube-controller-manager, kube-scheduler %s, KWOK) with %d nodes", suiteVersion, o.nodes)
			c, err = startReference(ctx, root, out, o.kubectl, o.nodes)
			target = fmt.Sprintf("kube-apiserver %s + KWOK, %d nodes", suiteVersion, o.nodes)
		} else {
			c, err = upSetpoint(ctx, root, o, out)
			target = fmt.Sprintf("setpoint up --nodes %d", o.nodes)
		}
		if err != nil {
			return nil, err
		}
		defer c.stop()
		kubeconfig = c.kubeconfig
	}
	logf("running %d specs on %s, %d at a time, %s each at most; outputs in %s", len(specs), target, o.parallel, o.timeout, out)
	sr := *r
	sr.kubeconfig, sr.outDir = kubeconfig, out
	n := 0
	results := sr.runAll(ctx, specs, func(res result) {
		n++
		logf("[%d/%d] %-8s %5.1fs %s", n, len(specs), res.Status, res.Duration.Seconds(), res.Spec.Location)
	})
	wall := time.Since(begin)
	if err := writeJUnit(filepath.Join(out, "junit.xml"), results, wall); err != nil {
		return nil, err
	}
	if err := writeResults(filepath.Join(out, "results.tsv"), results); err != nil {
		return nil, err
	}
	for _, res := range results {
		if res.Status != "passed" {
			fmt.Printf("%s %s: %s\n    %.300s\n", res.Status, res.Spec.Location, res.Spec.Name, res.Message)
		}
	}
	fmt.Printf("JUnit report: %s\n", filepath.Join(out, "junit.xml"))
	writeSIGTable(os.Stdout, results)
	fmt.Println(summary(results, wall, target))
	return results, nil
}

func selectSpecs(o options) ([]spec, error) {
	specs, err := readSpecs(o.specs)
	if err != nil {
		return nil, err
	}
	if o.subset != "" {
		if specs, err = subset(specs, o.subset); err != nil {
			return nil, err
		}
	}
	if o.only != "" {
		re, err := regexp.Compile(o.only)
		if err != nil {
			return nil, fmt.Errorf("-only: %w", err)
		}
		var kept []spec
		for _, s := range specs {
			if re.MatchString(s.Location) || re.MatchString(s.Name) {
				kept = append(kept, s)
			}
		}
		specs = kept
	}
	if len(specs) == 0 {
		return nil, errors.New("no specs selected")
	}
	return specs, nil
}

// upSetpoint builds setpoint (unless -setpoint names one) and starts it.
func upSetpoint(ctx context.Context, root string, o options, dir string) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin := o.setpoint
	if bin == "" {
		logf("building setpoint")
		var err error
		if bin, err = buildSetpoint(root, dir); err != nil {
			return nil, err
		}
	}
	logf("starting setpoint up --nodes %d (log: %s)", o.nodes, filepath.Join(dir, "setpoint.log"))
	return startSetpoint(ctx, bin, dir, o.kubectl, o.nodes)
}
