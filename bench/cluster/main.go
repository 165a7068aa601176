package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

type config struct {
	workloads, sides                         string
	rounds                                   int
	timeout                                  time.Duration
	deployReplicas, deployNodes              int
	jobCompletions, jobParallelism, jobNodes int
	stsReplicas, stsNodes                    int
	dsNodes                                  int
	refQPS, refBurst                         int
	refDefaults                              bool
	setpointBin, jsonOut                     string
	quick                                    bool
}

func main() {
	var c config
	flag.StringVar(&c.workloads, "workloads", "deployment,job,statefulset,daemonset", "workloads to run, comma-separated")
	flag.StringVar(&c.sides, "sides", "reference,setpoint", "sides to run, comma-separated: reference, setpoint, setpoint-kwok-nodes (setpoint whose simulated nodes do the API work KWOK's do: no kubelet events, no dependency reads), setpoint-alwaysallow (setpoint with --authorization-mode AlwaysAllow); reference-defaults is added by -reference-defaults")
	flag.IntVar(&c.rounds, "rounds", 1, "rounds; each runs every workload on every side, alternating")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "bound on one workload run; past it the run is reported as not finished")
	flag.IntVar(&c.deployReplicas, "deploy-replicas", 10000, "Deployment replicas")
	flag.IntVar(&c.deployNodes, "deploy-nodes", 100, "nodes for the Deployment")
	flag.IntVar(&c.jobCompletions, "job-completions", 1000, "Job completions")
	flag.IntVar(&c.jobParallelism, "job-parallelism", 100, "Job parallelism")
	flag.IntVar(&c.jobNodes, "job-nodes", 100, "nodes for the Job")
	flag.IntVar(&c.stsReplicas, "sts-replicas", 500, "StatefulSet replicas")
	flag.IntVar(&c.stsNodes, "sts-nodes", 100, "nodes for the StatefulSet")
	flag.IntVar(&c.dsNodes, "ds-nodes", 500, "nodes (and so pods) for the DaemonSet")
	flag.IntVar(&c.refQPS, "reference-qps", 1000, "--kube-api-qps of kube-controller-manager and kube-scheduler")
	flag.IntVar(&c.refBurst, "reference-burst", 1000, "--kube-api-burst of kube-controller-manager and kube-scheduler")
	flag.BoolVar(&c.refDefaults, "reference-defaults", false, "also run the reference with the components' default client limits")
	flag.StringVar(&c.setpointBin, "setpoint-bin", "", "setpoint executable (default: built from this repository)")
	flag.StringVar(&c.jsonOut, "json", "", "also write every run's figures to this file")
	flag.BoolVar(&c.quick, "quick", false, "small sizes, to check the harness: Deployment 500 on 10 nodes, Job 100/10 on 10, StatefulSet 50 on 10, DaemonSet on 20 nodes, timeout 2m (explicit flags still win)")
	flag.Parse()
	if c.quick {
		applyQuick(&c)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-cluster:", err)
		os.Exit(1)
	}
}

// applyQuick lowers every size the command line did not set.
func applyQuick(c *config) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := map[string]func(){
		"deploy-replicas": func() { c.deployReplicas = 500 },
		"deploy-nodes":    func() { c.deployNodes = 10 },
		"job-completions": func() { c.jobCompletions = 100 },
		"job-parallelism": func() { c.jobParallelism = 10 },
		"job-nodes":       func() { c.jobNodes = 10 },
		"sts-replicas":    func() { c.stsReplicas = 50 },
		"sts-nodes":       func() { c.stsNodes = 10 },
		"ds-nodes":        func() { c.dsNodes = 20 },
		"timeout":         func() { c.timeout = 2 * time.Minute },
	}
	for name, apply := range quick {
		if !set[name] {
			apply()
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	all := map[string]workload{}
	for _, w := range []workload{
		deploymentWorkload(c.deployReplicas, c.deployNodes),
		jobWorkload(c.jobCompletions, c.jobParallelism, c.jobNodes),
		statefulSetWorkload(c.stsReplicas, c.stsNodes),
		daemonSetWorkload(c.dsNodes),
	} {
		all[w.name] = w
	}
	var workloads []workload
	for _, name := range splitList(c.workloads) {
		w, ok := all[name]
		if !ok {
			return fmt.Errorf("unknown workload %q", name)
		}
		workloads = append(workloads, w)
	}
	sides, err := makeSides(c)
	if err != nil {
		return err
	}
	logf("machine: %s", machine())
	var results []result
	for round := 1; round <= c.rounds; round++ {
		for _, w := range workloads {
			for _, s := range sides {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r := runOne(ctx, s, w, round, c.timeout)
				logf("%s", r.line())
				results = append(results, r)
			}
		}
	}
	fmt.Println()
	printSummary(os.Stdout, workloads, sides, results)
	if c.jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
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

// makeSides finds or builds what the requested sides need.
func makeSides(c config) ([]side, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	var sides []side
	for _, name := range splitList(c.sides) {
		switch name {
		case "reference":
			logf("finding the reference binaries (a first build takes minutes)")
			bins, err := refcluster.FindBinaries()
			if err != nil {
				return nil, err
			}
			kwok, err := findKWOK(root)
			if err != nil {
				return nil, err
			}
			sides = append(sides, referenceSide(fmt.Sprintf("reference (qps %d)", c.refQPS), &bins, kwok, c.refQPS, c.refBurst))
			if c.refDefaults {
				sides = append(sides, referenceSide("reference (default qps)", &bins, kwok, 0, 0))
			}
		case "setpoint", "setpoint-kwok-nodes", "setpoint-alwaysallow":
			if c.setpointBin == "" {
				if c.setpointBin, err = buildSetpoint(root); err != nil {
					return nil, err
				}
			}
			sides = append(sides, setpointSide(name, c.setpointBin, setpointFlags[name]...))
		default:
			return nil, fmt.Errorf("unknown side %q", name)
		}
	}
	if len(sides) == 0 {
		return nil, errors.New("no sides")
	}
	return sides, nil
}

// buildSetpoint builds cmd/setpoint of the repository into .bin/.
func buildSetpoint(root string) (string, error) {
	out := filepath.Join(root, ".bin", "setpoint-bench")
	logf("building setpoint into %s", out)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/setpoint")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build setpoint: %w\n%s", err, b)
	}
	return out, nil
}

// machine describes where the figures come from.
func machine() string {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fields := strings.Fields(string(load))
	if len(fields) > 3 {
		fields = fields[:3]
	}
	return fmt.Sprintf("%s, %d CPUs, load average %s", host, numCPU(), strings.Join(fields, " "))
}
