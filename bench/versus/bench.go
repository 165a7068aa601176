package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/setpoint-dev/setpoint/compat/procstat"
)

const (
	mb          = 1 << 20
	pageSize    = 500
	loadWriters = 64 // writers of the untimed loads
)

// bench is the configured workloads, run on one side at a time.
type bench struct {
	c         config
	workloads map[string]bool
}

// Figure keys; the labels come from the configuration.
func (b *bench) figures() []figure {
	n, large := thousands(b.c.objects), thousands(b.c.largeObjects)
	figs := []figure{{"startup", "start to ready", "s", false}}
	if b.workloads["creates"] {
		for _, w := range b.c.writers {
			figs = append(figs, figure{createKey(w), fmt.Sprintf("creates of %s 1 KiB ConfigMaps, %d writers", n, w), "/s", true},
				figure{createKey(w) + "-client-cpu", fmt.Sprintf("driver CPU per create, %d writers", w), "µs", false},
				figure{createKey(w) + "-server-cpu", fmt.Sprintf("server CPU per create, %d writers", w), "µs", false})
		}
	}
	if b.workloads["lists"] {
		figs = append(figs,
			figure{"list", "list of " + n + ", unpaged", "ms", false},
			figure{"list-paged", fmt.Sprintf("list of %s, pages of %d", n, pageSize), "ms", false},
			figure{"list-selector", fmt.Sprintf("list of %s by label selector (1 in %d match)", n, groups), "ms", false})
	}
	if b.workloads["informer"] {
		figs = append(figs,
			figure{"informer-sync", "informer initial sync of " + n, "ms", false},
			figure{"informer-heap", "client heap after sync of " + n, "MB", false})
	}
	if b.workloads["watch"] {
		for _, w := range b.c.watchers {
			figs = append(figs,
				figure{watchKey(w, "p50"), fmt.Sprintf("watch delivery p50, %d watchers", w), "ms", false},
				figure{watchKey(w, "p99"), fmt.Sprintf("watch delivery p99, %d watchers", w), "ms", false},
				figure{watchKey(w, "max"), fmt.Sprintf("watch delivery max, %d watchers", w), "ms", false},
				figure{watchKey(w, "getput"), fmt.Sprintf("get+put by one writer, %d watchers open", w), "/s", true},
				figure{watchKey(w, "client-cpu"), fmt.Sprintf("driver CPU per delivered event, %d watchers", w), "µs", false},
				figure{watchKey(w, "server-cpu"), fmt.Sprintf("server CPU per delivered event, %d watchers", w), "µs", false})
		}
	}
	if b.workloads["informer-large"] {
		figs = append(figs,
			figure{"large-load", fmt.Sprintf("creates loading %s, %d writers", large, loadWriters), "/s", true},
			figure{"informer-large-sync", "informer initial sync of " + large, "ms", false},
			figure{"informer-large-heap", "client heap after sync of " + large, "MB", false})
	}
	for _, w := range allWorkloads {
		if b.workloads[w] {
			figs = append(figs,
				figure{"rss-" + w, "server RSS after " + w, "MB", false},
				figure{"cpu-" + w, "server CPU during " + w, "s", false})
		}
	}
	return figs
}

func createKey(writers int) string       { return fmt.Sprintf("creates-%d", writers) }
func watchKey(n int, what string) string { return fmt.Sprintf("watch-%d-%s", n, what) }

// figure finds a figure by key.
func (b *bench) figure(key string) figure {
	for _, f := range b.figures() {
		if f.Key == key {
			return f
		}
	}
	panic("bench-versus: no figure " + key)
}

// thousands writes n with comma separators: 10,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sideRun is the state of one side's run: its server, a client, and the
// namespaces loaded so far.
type sideRun struct {
	*run
	srv    *server
	cs     kubernetes.Interface
	loaded map[string]bool
}

// runSide starts a fresh server of s, runs every workload on it, sampling
// the server's processes around each, and stops it.
func (b *bench) runSide(ctx context.Context, s side, round int) run {
	r := run{Side: s.name, Round: round, Figures: map[string]float64{}, LoadBefore: loadAverage()}
	logf("round %d: %s: starting (load %s)", round, s.name, r.LoadBefore)
	srv, err := s.start(ctx)
	if err != nil {
		r.Errors = append(r.Errors, "start: "+err.Error())
		return r
	}
	defer func() {
		if err := srv.stop(); err != nil {
			logf("stop %s: %v", s.name, err)
		}
	}()
	r.set(b.figure("startup"), srv.startup.Seconds())
	cs, err := newClientset(srv.kubeconfig, nil)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	sr := &sideRun{run: &r, srv: srv, cs: cs, loaded: map[string]bool{}}
	for _, w := range allWorkloads {
		if !b.workloads[w] || ctx.Err() != nil {
			continue
		}
		logf("round %d: %s: %s", round, s.name, w)
		if err := b.measured(ctx, sr, w); err != nil {
			r.Errors = append(r.Errors, w+": "+err.Error())
			logf("round %d: %s: %s FAILED: %v", round, s.name, w, err)
		}
	}
	r.LoadAfter = loadAverage()
	logf("round %d: %s: done (load %s)", round, s.name, r.LoadAfter)
	return r
}

// measured runs workload w between two samples of the server's processes.
func (b *bench) measured(ctx context.Context, sr *sideRun, w string) error {
	before, err := procstat.SampleAll(sr.srv.procs)
	if err != nil {
		return err
	}
	werr := b.workload(ctx, sr, w)
	after, err := procstat.SampleAll(sr.srv.procs)
	if err != nil {
		return err
	}
	p := phase{Workload: w, Processes: map[string]procFigures{}}
	for name, a := range after {
		f := procFigures{RSSBytes: a.RSSBytes, CPUSeconds: a.CPUSeconds - before[name].CPUSeconds}
		p.Processes[name] = f
		p.RSSBytes += f.RSSBytes
		p.CPUSeconds += f.CPUSeconds
	}
	sr.Phases = append(sr.Phases, p)
	if werr == nil {
		sr.set(b.figure("rss-"+w), float64(p.RSSBytes)/mb)
		sr.set(b.figure("cpu-"+w), p.CPUSeconds)
		if len(p.Processes) > 1 {
			logf("  %s: %s", sr.Side, p.split())
		}
	}
	return werr
}

// split lists each process's memory and CPU seconds, by name.
func (p phase) split() string {
	names := slices.Sorted(maps.Keys(p.Processes))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		f := p.Processes[n]
		parts = append(parts, fmt.Sprintf("%s %.0f MB / %.2f s", n, float64(f.RSSBytes)/mb, f.CPUSeconds))
	}
	return strings.Join(parts, ", ")
}

func (b *bench) workload(ctx context.Context, sr *sideRun, w string) error {
	switch w {
	case "creates":
		return b.creates(ctx, sr)
	case "lists":
		return b.lists(ctx, sr)
	case "informer":
		return b.informer(ctx, sr)
	case "watch":
		return b.watch(ctx, sr)
	case "informer-large":
		return b.informerLarge(ctx, sr)
	}
	return fmt.Errorf("unknown workload %q", w)
}

// baseNamespace holds the -objects ConfigMaps the lists and the informer
// read: those of the first create run.
func (b *bench) baseNamespace() string { return fmt.Sprintf("versus-w%d", b.c.writers[0]) }

// ensureLoaded creates n ConfigMaps in ns unless this side's run did.
func (b *bench) ensureLoaded(ctx context.Context, sr *sideRun, ns string, n int) error {
	if sr.loaded[ns] {
		return nil
	}
	if err := createNamespace(ctx, sr.cs, ns); err != nil {
		return err
	}
	if _, err := createConfigMaps(ctx, sr.cs, ns, n, loadWriters); err != nil {
		return err
	}
	sr.loaded[ns] = true
	return nil
}

func (b *bench) creates(ctx context.Context, sr *sideRun) error {
	for _, w := range b.c.writers {
		ns := fmt.Sprintf("versus-w%d", w)
		if err := createNamespace(ctx, sr.cs, ns); err != nil {
			return err
		}
		cpu, err := sampleCPU(sr.srv.procs)
		if err != nil {
			return err
		}
		elapsed, err := createConfigMaps(ctx, sr.cs, ns, b.c.objects, w)
		if err != nil {
			return err
		}
		client, server, err := cpu()
		if err != nil {
			return err
		}
		sr.loaded[ns] = true
		perCreate := 1e6 / float64(b.c.objects)
		sr.set(b.figure(createKey(w)), float64(b.c.objects)/elapsed.Seconds())
		sr.set(b.figure(createKey(w)+"-client-cpu"), client*perCreate)
		sr.set(b.figure(createKey(w)+"-server-cpu"), server*perCreate)
	}
	return nil
}

func (b *bench) lists(ctx context.Context, sr *sideRun) error {
	ns := b.baseNamespace()
	if err := b.ensureLoaded(ctx, sr, ns, b.c.objects); err != nil {
		return err
	}
	n := b.c.objects
	matching := (n + groups - 1 - 3) / groups // indexes i with i%groups == 3
	for _, l := range []struct {
		key  string
		want int
		list func(context.Context) (int, error)
	}{
		{"list", n, listAll(sr.cs, ns, "")},
		{"list-paged", n, listPaged(sr.cs, ns, pageSize)},
		{"list-selector", matching, listAll(sr.cs, ns, "group=3")},
	} {
		d, err := timeList(ctx, b.c.reps, l.want, l.list)
		if err != nil {
			return fmt.Errorf("%s: %w", l.key, err)
		}
		sr.set(b.figure(l.key), ms(d))
	}
	return nil
}

// syncs runs the informer sync reps times and records the medians.
func (b *bench) syncs(ctx context.Context, sr *sideRun, ns string, n, reps int, syncKey, heapKey string) error {
	var times, heaps []float64
	for range reps {
		res, err := syncInformer(ctx, sr.srv.kubeconfig, ns, n)
		if err != nil {
			return err
		}
		times, heaps = append(times, ms(res.sync)), append(heaps, float64(res.heapBytes)/mb)
		logf("  %s: informer sync of %s: %s, heap %.1f MB (%s)", sr.Side, thousands(n), res.sync.Round(time.Millisecond), float64(res.heapBytes)/mb, res.requests)
		sr.Notes = append(sr.Notes, fmt.Sprintf("informer on %s: %s", ns, res.requests))
	}
	sr.set(b.figure(syncKey), median(times))
	sr.set(b.figure(heapKey), median(heaps))
	return nil
}

func (b *bench) informer(ctx context.Context, sr *sideRun) error {
	ns := b.baseNamespace()
	if err := b.ensureLoaded(ctx, sr, ns, b.c.objects); err != nil {
		return err
	}
	return b.syncs(ctx, sr, ns, b.c.objects, b.c.reps, "informer-sync", "informer-heap")
}

func (b *bench) informerLarge(ctx context.Context, sr *sideRun) error {
	const ns = "versus-large"
	if err := createNamespace(ctx, sr.cs, ns); err != nil {
		return err
	}
	elapsed, err := createConfigMaps(ctx, sr.cs, ns, b.c.largeObjects, loadWriters)
	if err != nil {
		return err
	}
	sr.loaded[ns] = true
	sr.set(b.figure("large-load"), float64(b.c.largeObjects)/elapsed.Seconds())
	return b.syncs(ctx, sr, ns, b.c.largeObjects, 1, "informer-large-sync", "informer-large-heap")
}

func (b *bench) watch(ctx context.Context, sr *sideRun) error {
	const ns = "versus-watch"
	if err := createNamespace(ctx, sr.cs, ns); err != nil {
		return err
	}
	for _, n := range b.c.watchers {
		res, err := watchFanout(ctx, sr.srv.kubeconfig, ns, n, b.c.watchClients, b.c.watchFor, sr.srv.procs)
		if err != nil {
			return fmt.Errorf("%d watchers: %w", n, err)
		}
		logf("  %s: %d watchers opened in %s; %d of %d events delivered", sr.Side, n,
			res.setup.Round(time.Millisecond), res.delivered, res.expected)
		if res.delivered < res.expected {
			sr.Notes = append(sr.Notes, fmt.Sprintf("%d watchers: %d of %d events delivered", n, res.delivered, res.expected))
		}
		sr.set(b.figure(watchKey(n, "p50")), ms(res.p50))
		sr.set(b.figure(watchKey(n, "p99")), ms(res.p99))
		sr.set(b.figure(watchKey(n, "max")), ms(res.max))
		sr.set(b.figure(watchKey(n, "getput")), res.writesPerSec)
		if res.delivered > 0 {
			perEvent := 1e6 / float64(res.delivered)
			sr.set(b.figure(watchKey(n, "client-cpu")), res.clientCPU*perEvent)
			sr.set(b.figure(watchKey(n, "server-cpu")), res.serverCPU*perEvent)
		}
	}
	return nil
}
