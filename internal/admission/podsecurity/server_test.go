package podsecurity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	ps "github.com/setpoint-dev/setpoint/internal/admission/podsecurity"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// wired runs p in a test server's validating admission, after each kind's
// own, in place of the chain's PodSecurity (of the default configuration):
// so the tests choose the plugin's configuration and annotator.
func wired(p *ps.Plugin) testserver.Options {
	return wiredTo(func() *ps.Plugin { return p })
}

// wiredTo runs the plugin current returns (none while it returns nil).
func wiredTo(current func() *ps.Plugin) testserver.Options {
	// (a bare test server runs no ServiceAccount controller: that plugin
	// stays off, as testserver has it by default)
	return testserver.Options{DisableAdmissionPlugins: []string{"PodSecurity", "ServiceAccount"}, Tune: func(c *apiserver.Config) {
		for i, r := range c.Resources {
			res := *r
			prev := r.AdmitValidate
			res.AdmitValidate = func(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
				var txn *registry.Txn
				if prev != nil {
					t, err := prev(ctx, env, a)
					if err != nil {
						return nil, err
					}
					txn = t
				}
				p := current()
				if p == nil {
					return txn, nil
				}
				if _, err := p.Validate(ctx, env, a); err != nil {
					txn.Finish(false)
					return nil, err
				}
				return txn, nil
			}
			c.Resources[i] = &res
		}
	}}
}

// target is setpoint's server running p, or, with reftest.Env set, the
// reference (whose PodSecurity has the default configuration), so that
// the same cases check their Want against kube-apiserver.
func target(t *testing.T, p *ps.Plugin) *reftest.Server {
	t.Helper()
	if kc := os.Getenv(reftest.Env); kc != "" {
		return reftest.Reference(t, kc)
	}
	return reftest.Start(t, wired(p))
}

// namespace creates a namespace with labels (deleting it first and at the
// end on the reference), and waits on the reference until its default
// ServiceAccount exists, which the reference's pods need.
func namespace(t *testing.T, s *reftest.Server, name string, labels map[string]string) {
	t.Helper()
	path := "/api/v1/namespaces/" + name
	if s.Test == nil {
		gone(t, s, path)
		t.Cleanup(func() { s.Do(t, http.MethodDelete, path, ""); gone(t, s, path) })
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels}})
	s.Must(t, http.MethodPost, "/api/v1/namespaces", string(body), http.StatusCreated, nil)
	if s.Test == nil {
		waitFor(t, s, path+"/serviceaccounts/default")
	}
}

// gone deletes path and waits until it is gone.
func gone(t *testing.T, s *reftest.Server, path string) {
	t.Helper()
	s.Do(t, http.MethodDelete, path, "")
	testwait.UntilEvery(t, 2*time.Minute, 300*time.Millisecond, path+" deleted", func() error {
		if code, _ := s.Do(t, http.MethodGet, path, ""); code != http.StatusNotFound {
			return fmt.Errorf("GET %s: %d", path, code)
		}
		return nil
	})
}

func waitFor(t *testing.T, s *reftest.Server, path string) {
	t.Helper()
	testwait.UntilEvery(t, time.Minute, 200*time.Millisecond, path+" to appear", func() error {
		if code, _ := s.Do(t, http.MethodGet, path, ""); code != http.StatusOK {
			return fmt.Errorf("GET %s: %d", path, code)
		}
		return nil
	})
}

// warningHeader is a Warning header as kube-apiserver writes it.
func warningHeader(msg string) string {
	msg = strings.ReplaceAll(msg, `\`, `\\`)
	return `299 - "` + strings.ReplaceAll(msg, `"`, `\"`) + `"`
}

var podsGR = schema.GroupResource{Resource: "pods"}

// forbidden is the Want of a pod refused by enforce level lv.
func forbidden(name, lv, detail string) *reftest.Answer {
	return reftest.Refusal(apierrors.NewForbidden(podsGR, name, fmt.Errorf("violates PodSecurity %q: %s", lv, detail)))
}

// admitted is the Want of a write admitted with warnings (the object
// written is left out of the comparison: the reference's admission adds
// what setpoint's chain may not yet).
func admitted(code int, warnings ...string) *reftest.Answer {
	a := &reftest.Answer{Code: code}
	for _, w := range warnings {
		a.Warnings = append(a.Warnings, warningHeader(w))
	}
	return a
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChecksOnServer: the pods of TestChecks created (dry run) in a
// namespace enforcing baseline and warning restricted, and in one
// enforcing restricted: refused with kube-apiserver's 403 or admitted
// with its warning, the store unchanged after each refusal. With
// reftest.Env set, the same cases run against kube-apiserver.
func TestChecksOnServer(t *testing.T) {
	t.Parallel()
	s := target(t, newPlugin(t, nil))
	const base, restr = "podsecurity-checks-baseline", "podsecurity-checks-restricted"
	namespace(t, s, base, map[string]string{ps.EnforceLevelLabel: "baseline", ps.WarnLevelLabel: "restricted"})
	namespace(t, s, restr, map[string]string{ps.EnforceLevelLabel: "restricted"})
	var cases []reftest.Case
	for _, c := range checkCases {
		if c.unitOnly {
			continue
		}
		body := mustJSON(t, c.pod())
		post := func(ns string) reftest.Request {
			return reftest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + ns + "/pods?dryRun=All", Body: body}
		}
		bc := reftest.Case{Name: c.name + "/baseline", Request: post(base), Ignore: []string{"*"}}
		switch {
		case c.baseline != "":
			bc.Want, bc.Ignore = forbidden(c.name, "baseline:latest", c.baseline), nil
		case c.restricted != "":
			bc.Want = admitted(http.StatusCreated, `would violate PodSecurity "restricted:latest": `+c.restricted)
		default:
			bc.Want = admitted(http.StatusCreated)
		}
		rc := reftest.Case{Name: c.name + "/restricted", Request: post(restr), Ignore: []string{"*"}, Want: admitted(http.StatusCreated)}
		if c.restricted != "" {
			rc.Want, rc.Ignore = forbidden(c.name, "restricted:latest", c.restricted), nil
		}
		cases = append(cases, bc, rc)
	}
	s.Replay(t, cases)
}

// TestReference replays testdata/reference.json, the Pod Security
// examples of kubernetes.io (the namespace-level and cluster-level
// tutorials, the namespace-labels task; namespaces renamed podsecurity-*)
// with invalid labels, existing-pod warnings, pod updates and workloads,
// recorded from kube-apiserver v1.37.2 (with reftest.Env set, it records
// them again). testdata/gen_reference.py writes the cases.
func TestReference(t *testing.T) {
	t.Parallel()
	const file = "testdata/reference.json"
	f, err := reftest.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if kc := os.Getenv(reftest.Env); kc != "" {
		reftest.Reference(t, kc).Record(t, file, f)
		return
	}
	s := reftest.Start(t, wired(newPlugin(t, nil)))
	for _, ns := range f.Namespaces {
		s.Must(t, http.MethodPost, "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns), http.StatusCreated, nil)
	}
	s.Replay(t, f.Cases)
}
