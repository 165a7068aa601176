package core_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// pdbResource is a minimal policy/v1 poddisruptionbudgets resource with a
// status subresource, standing in for the kind in the eviction tests when
// the build does not serve it.
func pdbResource() *registry.Resource {
	return &registry.Resource{
		Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget",
		ListKind: "PodDisruptionBudgetList", Singular: "poddisruptionbudget", ShortNames: []string{"pdb"}, Namespaced: true,
		New:      func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		NewList:  func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		Strategy: strategy.Typed[*policyv1.PodDisruptionBudget]{PrepareUpdate: func(p, old *policyv1.PodDisruptionBudget) { p.Status = old.Status }},
		Status: strategy.TypedStatus[*policyv1.PodDisruptionBudget]{PrepareUpdate: func(p, old *policyv1.PodDisruptionBudget) {
			p.Spec = old.Spec
			strategy.ResetMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
		}},
		Attrs: strategy.Attrs[*policyv1.PodDisruptionBudget](true, nil),
	}
}

const pdbsPath = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"

func evictionServer(t *testing.T) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) {
		for _, r := range c.Resources {
			if r.Group == "policy" && r.Resource == "poddisruptionbudgets" {
				return // served by the build: the tests use the real kind
			}
		}
		c.Resources = append(c.Resources, pdbResource())
	}})
}

// runningPod creates a pod on node n1 labelled app=<app>, Running, ready
// or not.
func runningPod(t *testing.T, s *testserver.Server, name, app string, ready bool) {
	t.Helper()
	mustSend(t, s, http.MethodPost, podsPath, "application/json", fmt.Sprintf(
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"app":%q}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"busybox"}]}}`, name, app), 201)
	setPodStatus(t, s, name, "10.128.0.9", ready)
}

// budget creates a PDB selecting app=<app> with the given status.
func budget(t *testing.T, s *testserver.Server, name, app string, allowed, current, desired int, observedGen int64) {
	t.Helper()
	mustSend(t, s, http.MethodPost, pdbsPath, "application/json", fmt.Sprintf(
		`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":%q},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":%q}}}}`, name, app), 201)
	mustSend(t, s, http.MethodPatch, pdbsPath+"/"+name+"/status", "application/merge-patch+json", fmt.Sprintf(
		`{"status":{"disruptionsAllowed":%d,"currentHealthy":%d,"desiredHealthy":%d,"expectedPods":1,"observedGeneration":%d}}`,
		allowed, current, desired, observedGen), 200)
}

func evictBody(name string) string {
	return fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q}}`, name)
}

func getPodObj(t *testing.T, s *testserver.Server, name string) (int, corev1.Pod) {
	t.Helper()
	code, body := send(t, s, http.MethodGet, podsPath+"/"+name, "", "")
	var p corev1.Pod
	_ = json.Unmarshal([]byte(body), &p)
	return code, p
}

func getPDB(t *testing.T, s *testserver.Server, name string) policyv1.PodDisruptionBudget {
	t.Helper()
	var p policyv1.PodDisruptionBudget
	if err := json.Unmarshal([]byte(mustSend(t, s, http.MethodGet, pdbsPath+"/"+name, "", "", 200)), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

const evicted = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}` + "\n"

func TestEvictionHonoursBudgets(t *testing.T) {
	s := evictionServer(t)
	runningPod(t, s, "guarded", "web", true)
	budget(t, s, "web", "web", 0, 1, 1, 1)
	before := getPDB(t, s, "web")

	code, body := send(t, s, http.MethodPost, podsPath+"/guarded/eviction", "application/json", evictBody("guarded"))
	st := expectStatus(t, "blocked", code, body, 429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
	if len(st.Details.Causes) != 1 || st.Details.Causes[0].Reason != "DisruptionBudget" ||
		st.Details.Causes[0].Message != "The disruption budget web needs 1 healthy pods and has 1 currently" {
		t.Errorf("causes %+v", st.Details.Causes)
	}
	if code, p := getPodObj(t, s, "guarded"); code != 200 || p.DeletionTimestamp != nil {
		t.Errorf("a refused eviction touched the pod: %d %v", code, p.DeletionTimestamp)
	}
	if after := getPDB(t, s, "web"); after.ResourceVersion != before.ResourceVersion {
		t.Error("a refused eviction wrote the budget")
	}

	// The budget allows one disruption now: the eviction takes it.
	mustSend(t, s, http.MethodPatch, pdbsPath+"/web/status", "application/merge-patch+json", `{"status":{"disruptionsAllowed":1,"currentHealthy":2}}`, 200)
	runningPod(t, s, "second", "web", true)
	dry := mustSend(t, s, http.MethodPost, podsPath+"/guarded/eviction?dryRun=All", "application/json", evictBody("guarded"), 201)
	if pdb := getPDB(t, s, "web"); dry != evicted || pdb.Status.DisruptionsAllowed != 1 || len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("dry run: %s, budget %+v", dry, pdb.Status)
	}
	if got := mustSend(t, s, http.MethodPost, podsPath+"/guarded/eviction", "application/json",
		`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"guarded"},"deleteOptions":{"gracePeriodSeconds":7}}`, 201); got != evicted {
		t.Errorf("eviction answer %s", got)
	}
	pdb := getPDB(t, s, "web")
	cond := pdb.Status.Conditions
	if _, ok := pdb.Status.DisruptedPods["guarded"]; !ok || pdb.Status.DisruptionsAllowed != 0 || len(cond) != 1 ||
		cond[0].Type != "DisruptionAllowed" || cond[0].Status != "False" || cond[0].Reason != "InsufficientPods" || cond[0].ObservedGeneration != 1 {
		t.Errorf("budget after the eviction: %+v", pdb.Status)
	}
	_, p := getPodObj(t, s, "guarded")
	if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 7 || !hasDisruptionTarget(&p) {
		t.Errorf("evicted pod: deletion %v grace %v conditions %+v", p.DeletionTimestamp, p.DeletionGracePeriodSeconds, p.Status.Conditions)
	}
	code, body = send(t, s, http.MethodPost, podsPath+"/second/eviction", "application/json", evictBody("second"))
	expectStatus(t, "budget spent", code, body, 429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
}

func hasDisruptionTarget(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" && c.Message == "Eviction API: evicting" {
			return true
		}
	}
	return false
}

func TestEvictionCases(t *testing.T) {
	s := evictionServer(t)
	evict := func(name, body string) (int, string) {
		return send(t, s, http.MethodPost, podsPath+"/"+name+"/eviction", "application/json", body)
	}
	t.Run("no budget", func(t *testing.T) {
		runningPod(t, s, "free", "free", true)
		if code, body := evict("free", evictBody("free")); code != 201 || body != evicted {
			t.Errorf("%d %s", code, body)
		}
	})
	t.Run("terminal and pending pods skip the budget", func(t *testing.T) {
		runningPod(t, s, "done", "blocked", true)
		mustSend(t, s, http.MethodPatch, podsPath+"/done/status", "application/merge-patch+json", `{"status":{"phase":"Succeeded"}}`, 200)
		mustSend(t, s, http.MethodPost, podsPath, "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending","labels":{"app":"blocked"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, 201)
		budget(t, s, "blocked", "blocked", 0, 1, 1, 1)
		for _, name := range []string{"done", "pending"} {
			if code, body := evict(name, evictBody(name)); code != 201 {
				t.Errorf("%s: %d %s", name, code, body)
			}
			if code, _ := getPodObj(t, s, name); code != 404 {
				t.Errorf("%s not deleted at once: %d", name, code)
			}
		}
	})
	t.Run("an unready pod goes when the budget is healthy", func(t *testing.T) {
		runningPod(t, s, "unready", "healthy", false)
		budget(t, s, "healthy", "healthy", 0, 2, 2, 1)
		if code, body := evict("unready", evictBody("unready")); code != 201 {
			t.Errorf("%d %s", code, body)
		}
		if pdb := getPDB(t, s, "healthy"); len(pdb.Status.DisruptedPods) != 0 {
			t.Errorf("an unready pod was charged to the budget: %+v", pdb.Status)
		}
	})
	t.Run("two budgets", func(t *testing.T) {
		runningPod(t, s, "twice", "twice", true)
		budget(t, s, "twice-a", "twice", 1, 1, 0, 1)
		budget(t, s, "twice-b", "twice", 1, 1, 0, 1)
		code, body := evict("twice", evictBody("twice"))
		expectStatus(t, "two budgets", code, body, 500, "", "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
		if code, p := getPodObj(t, s, "twice"); code != 200 || p.DeletionTimestamp != nil {
			t.Errorf("pod with two budgets deleted: %d", code)
		}
	})
	t.Run("a budget the controller has not observed", func(t *testing.T) {
		runningPod(t, s, "fresh", "fresh", true)
		budget(t, s, "fresh", "fresh", 1, 1, 0, 0)
		code, body, hdr := s.Do(t, http.MethodPost, podsPath+"/fresh/eviction", "application/json", stringsReader(evictBody("fresh")))
		st := expectStatus(t, "unobserved", code, string(body), 429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
		if hdr.Get("Retry-After") != "10" || len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != "The disruption budget fresh is still being processed by the server." {
			t.Errorf("Retry-After %q causes %+v", hdr.Get("Retry-After"), st.Details.Causes)
		}
	})
	t.Run("bodies", func(t *testing.T) {
		runningPod(t, s, "body", "body", true)
		code, body := evict("body", evictBody("other"))
		expectStatus(t, "name", code, body, 400, "BadRequest", "name in URL does not match name in Eviction object")
		code, body = evict("missing", evictBody("missing"))
		expectStatus(t, "missing", code, body, 404, "NotFound", `pods "missing" not found`)
		code, body = evict("body", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"body"}}`)
		expectStatus(t, "Pod body", code, body, 400, "BadRequest", `Pod in version "v1" cannot be handled as a Eviction: converting (v1.Pod) to (policy.Eviction): unknown conversion`)
		code, body = evict("body", "")
		expectStatus(t, "empty body", code, body, 400, "BadRequest",
			"the object provided is unrecognized (must be of type Eviction): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)")
		if code, body = evict("body", `{"apiVersion":"policy/v1beta1","kind":"Eviction","metadata":{"name":"body"}}`); code != 201 || body != evicted {
			t.Errorf("policy/v1beta1 Eviction: %d %s", code, body)
		}
	})
}
