package difftest

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// Allowlist is the record of every known difference (testdata/allowlist.yaml):
// resources setpoint does not serve yet, and differences with their
// reasons. Safe for concurrent use.
type Allowlist struct {
	// NotServed lists resources of the reference that setpoint does not
	// serve; every difference of their cases is covered by the entry.
	NotServed []NotServed `json:"notServed"`
	// Differences lists the other known differences.
	Differences []Entry `json:"differences"`

	mu   sync.Mutex
	used map[string]int
	// served, when set, names the resources setpoint serves: a NotServed
	// entry for one of them covers nothing (and so is reported unused).
	served func(resource string) bool
}

// SetServed tells the allowlist which resources setpoint serves, so that
// a NotServed entry stops covering differences once its kind arrives.
func (a *Allowlist) SetServed(served func(resource string) bool) { a.served = served }

// NotServed is a resource ("apps/v1/statefulsets", "core/v1/pods/eviction"
// for a subresource) setpoint does not serve.
type NotServed struct {
	Resource string `json:"resource"`
	Owner    string `json:"owner"`
	Why      string `json:"why"`
}

// Entry covers the differences whose category, case and path match its
// globs (an empty Path matches any path).
type Entry struct {
	Category string `json:"category"`
	// Case is a glob of case ids; Cases, several (either may be given).
	Case  string   `json:"case,omitempty"`
	Cases []string `json:"cases,omitempty"`
	Path  string   `json:"path,omitempty"`
	// What says in words what differs.
	What string `json:"what"`
	// Why says why the difference stays.
	Why string `json:"why"`
	// Owner is who can remove the difference: the kind helper's branch
	// ("kinds-core") for a kind's own behaviour, "setpoint" for the generic
	// server, "none" for a difference kept by design.
	Owner string `json:"owner"`
}

// LoadAllowlist reads an allowlist file.
func LoadAllowlist(path string) (*Allowlist, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	a := &Allowlist{}
	if err := yaml.UnmarshalStrict(b, a); err != nil {
		return nil, fmt.Errorf("allowlist %s: %w", path, err)
	}
	for i, e := range a.Differences {
		if e.Category == "" || (e.Case == "") == (len(e.Cases) == 0) || e.What == "" || e.Why == "" || e.Owner == "" {
			return nil, fmt.Errorf("allowlist %s: entry %d (%s %s) needs category, case or cases, what, why and owner", path, i, e.Category, e.Case)
		}
	}
	a.used = map[string]int{}
	return a, nil
}

// Match returns a description of the entry covering a difference, or "".
func (a *Allowlist) Match(d Difference) string {
	if a == nil {
		return ""
	}
	for _, ns := range a.NotServed {
		if a.served != nil && a.served(ns.Resource) {
			continue
		}
		if d.Case == ns.Resource || strings.HasPrefix(d.Case, ns.Resource+"/") || (d.Category == "served" && d.Case == ns.Resource) {
			a.mark("notServed " + ns.Resource)
			return "not served [" + ns.Owner + "]: " + ns.Why
		}
	}
	for _, e := range a.Differences {
		if Glob(e.Category, d.Category) && e.matchesCase(d.Case) && (e.Path == "" || Glob(e.Path, d.Path)) {
			a.mark(e.key())
			return "[" + e.Owner + "] " + e.What + ": " + e.Why
		}
	}
	return ""
}

func (e Entry) matchesCase(id string) bool {
	if e.Case != "" {
		return Glob(e.Case, id)
	}
	for _, c := range e.Cases {
		if Glob(c, id) {
			return true
		}
	}
	return false
}

// CaseText is the case glob, or the globs joined by ", ".
func (e Entry) CaseText() string {
	if e.Case != "" {
		return e.Case
	}
	return strings.Join(e.Cases, ", ")
}

func (e Entry) key() string { return e.Category + " " + e.CaseText() + " " + e.Path }

func (a *Allowlist) mark(key string) {
	a.mu.Lock()
	a.used[key]++
	a.mu.Unlock()
}

// Unused returns the entries that covered no difference, sorted.
func (a *Allowlist) Unused() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, ns := range a.NotServed {
		if a.used["notServed "+ns.Resource] == 0 {
			out = append(out, "notServed "+ns.Resource)
		}
	}
	for _, e := range a.Differences {
		if a.used[e.key()] == 0 {
			out = append(out, "difference "+e.key())
		}
	}
	sort.Strings(out)
	return out
}
