package manager

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Checker is a named health or readiness check: nil means healthy. It
// must be quick; it runs on every probe.
type Checker func(req *http.Request) error

type probe int

const (
	healthz probe = iota
	readyz
)

// checks holds the named checks of /healthz and /readyz.
type checks struct {
	mu sync.Mutex
	// byProbe keeps each probe's checks in registration order; names are
	// unique within a probe.
	byProbe [2][]namedCheck
}

type namedCheck struct {
	name  string
	check Checker
}

func newChecks() *checks { return &checks{} }

func (c *checks) add(p probe, name string, check Checker) error {
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("check name %q: must be non-empty without '/'", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(c.byProbe[p], func(n namedCheck) bool { return n.name == name }) {
		return fmt.Errorf("check %q already registered", name)
	}
	c.byProbe[p] = append(c.byProbe[p], namedCheck{name, check})
	return nil
}

// AddHealthzCheck adds a check to /healthz (liveness: failing it should
// get the process restarted). Names are unique; /healthz/<name> runs one.
func (m *Manager) AddHealthzCheck(name string, check Checker) error {
	return m.checks.add(healthz, name, check)
}

// AddReadyzCheck adds a check to /readyz (readiness: failing it takes the
// process out of service). The manager registers "informer-sync".
func (m *Manager) AddReadyzCheck(name string, check Checker) error {
	return m.checks.add(readyz, name, check)
}

// serve answers a probe the way Kubernetes components do: 200 "ok" when
// every check passes, else 500 listing "[-]name failed: reason" lines;
// ?verbose lists the passing checks as "[+]name ok" too; /<probe>/<name>
// runs one check.
func (c *checks) serve(p probe, prefix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		list := slices.Clone(c.byProbe[p])
		c.mu.Unlock()
		if name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, prefix), "/"); name != "" {
			i := slices.IndexFunc(list, func(n namedCheck) bool { return n.name == name })
			if i < 0 {
				http.NotFound(w, r)
				return
			}
			list = list[i : i+1]
		}
		var b strings.Builder
		failed := false
		for _, n := range list {
			if err := n.check(r); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", n.name, err)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", n.name)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(&b, "%s check failed\n", strings.TrimPrefix(prefix, "/"))
			_, _ = w.Write([]byte(b.String()))
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(&b, "%s check passed\n", strings.TrimPrefix(prefix, "/"))
			_, _ = w.Write([]byte(b.String()))
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

func (m *Manager) healthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", m.checks.serve(healthz, "/healthz"))
	mux.Handle("/healthz/", m.checks.serve(healthz, "/healthz"))
	mux.Handle("/readyz", m.checks.serve(readyz, "/readyz"))
	mux.Handle("/readyz/", m.checks.serve(readyz, "/readyz"))
	return mux
}

func (m *Manager) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorLog: slogPrinter{m}}))
	return mux
}

type slogPrinter struct{ m *Manager }

func (p slogPrinter) Println(v ...any) { p.m.log.Error("metrics", "err", fmt.Sprint(v...)) }

// informersSynced is the "informer-sync" readiness check.
func (m *Manager) informersSynced(*http.Request) error {
	var errs []error
	for _, t := range m.trackedInformers() {
		if !t.HasSynced() {
			if last := t.LastError(); last != nil {
				errs = append(errs, fmt.Errorf("%s not synced: %w", t, last))
			} else {
				errs = append(errs, fmt.Errorf("%s not synced", t))
			}
		}
	}
	return errors.Join(errs...)
}
