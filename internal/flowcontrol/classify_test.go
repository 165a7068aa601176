package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	fcreg "github.com/setpoint-dev/setpoint/internal/registry/flowcontrol"
)

// newDefault returns a controller on kube-apiserver's default
// configuration with 600 seats.
func newDefault(t *testing.T) *Controller {
	t.Helper()
	mfs, mpl := fcreg.MandatoryConfig()
	c := New(Options{ServerConcurrencyLimit: 600, MandatoryFlowSchemas: mfs, MandatoryPriorityLevels: mpl})
	c.Update(fcreg.Config())
	return c
}

var (
	authenticated = []string{"system:authenticated"}
	saGroups      = []string{"system:serviceaccounts", "system:serviceaccounts:tenant", "system:authenticated"}
)

func TestClassifyDefaults(t *testing.T) {
	c := newDefault(t)
	cases := []struct {
		name               string
		req                Request
		fs, pl, distinguis string
	}{
		{"admin", Request{User: "admin", Groups: []string{"system:masters", "system:authenticated"}, IsResource: true, Verb: "list", Resource: "pods"},
			"exempt", "exempt", ""},
		{"anonymous probe", Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz"},
			"probes", "exempt", ""},
		{"probe sub-path is not a probe", Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz/etcd"},
			"global-default", "global-default", "system:anonymous"},
		{"controller-manager lease", Request{User: "system:kube-controller-manager", Groups: authenticated, IsResource: true,
			Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "kube-controller-manager"},
			"system-leader-election", "leader-election", "system:kube-controller-manager"},
		{"controller-manager other", Request{User: "system:kube-controller-manager", Groups: authenticated, IsResource: true,
			Verb: "list", Resource: "pods", Namespace: "default"},
			"kube-controller-manager", "workload-high", "default"},
		{"kube-system service account", Request{User: "system:serviceaccount:kube-system:deployment-controller", Groups: authenticated,
			IsResource: true, Verb: "get", APIGroup: "apps", Resource: "deployments", Namespace: "ns1", Name: "d"},
			"kube-system-service-accounts", "workload-high", "ns1"},
		{"kube-system service account lease", Request{User: "system:serviceaccount:kube-system:my-operator", Groups: authenticated,
			IsResource: true, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "x"},
			"system-leader-election", "leader-election", "system:serviceaccount:kube-system:my-operator"},
		{"tenant service account", Request{User: "system:serviceaccount:tenant:app", Groups: saGroups,
			IsResource: true, Verb: "list", Resource: "configmaps", Namespace: "tenant"},
			"service-accounts", "workload-low", "system:serviceaccount:tenant:app"},
		{"node status", Request{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"},
			IsResource: true, Verb: "patch", Resource: "nodes", Subresource: "status", Name: "n1"},
			"system-node-high", "node-high", "system:node:n1"},
		{"node pods", Request{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"},
			IsResource: true, Verb: "list", Resource: "pods"},
			"system-nodes", "system", "system:node:n1"},
		{"scheduler", Request{User: "system:kube-scheduler", Groups: authenticated, IsResource: true, Verb: "create",
			Resource: "pods", Subresource: "binding", Namespace: "default", Name: "p"},
			"kube-scheduler", "workload-high", "default"},
		{"ordinary user", Request{User: "alice", Groups: authenticated, IsResource: true, Verb: "get", Resource: "pods", Namespace: "a", Name: "p"},
			"global-default", "global-default", "alice"},
		{"ordinary user non-resource", Request{User: "alice", Groups: authenticated, Verb: "get", Path: "/version"},
			"global-default", "global-default", "alice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl, ok := c.Classify(&tc.req)
			if !ok || cl.FlowSchema != tc.fs || cl.PriorityLevel != tc.pl || cl.Distinguisher != tc.distinguis {
				t.Errorf("got %+v (ok %v), want schema %s level %s distinguisher %q", cl, ok, tc.fs, tc.pl, tc.distinguis)
			}
		})
	}
}

func flowSchema(name string, prec int32, pl string, rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-fs-" + name)},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: prec, Rules: rules,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}}}
}

func limitedLevel(name string, shares int32, q *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if q != nil {
		lr = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
	}
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-pl-" + name)},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LimitResponse: lr}}}
}

func saRule(ns, name string, rr flowcontrolv1.ResourcePolicyRule) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{
		Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}},
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{rr}}
}

// TestClassifyRules covers the rule semantics on schemas of its own: the
// first by precedence then name wins, subresources must be named, a
// cluster-wide request needs clusterScope, and a schema whose level does
// not exist matches nothing.
func TestClassifyRules(t *testing.T) {
	c := newDefault(t)
	fss, pls := fcreg.Config()
	pls = append(pls, limitedLevel("mine", 10, nil))
	cmRule := flowcontrolv1.ResourcePolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""},
		Resources: []string{"configmaps", "pods/log"}, Namespaces: []string{"ns1"}}
	fss = append(fss,
		flowSchema("b-mine", 50, "mine", saRule("ns1", "*", cmRule)),
		flowSchema("a-mine", 50, "mine", saRule("ns1", "app", cmRule)),
		flowSchema("dangling", 10, "missing", saRule("ns1", "*", cmRule)),
		flowSchema("cluster", 60, "mine", saRule("ns1", "*", flowcontrolv1.ResourcePolicyRule{
			Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true})),
	)
	c.Update(fss, pls)
	sa := func(name string) Request {
		return Request{User: "system:serviceaccount:ns1:" + name, Groups: []string{"system:serviceaccounts", "system:authenticated"}, IsResource: true}
	}
	cases := []struct {
		name string
		mod  func(r *Request)
		user string
		want string
	}{
		{"tie on precedence goes to the first name", func(r *Request) { r.Verb, r.Resource, r.Namespace = "get", "configmaps", "ns1" }, "app", "a-mine"},
		{"other account in the namespace", func(r *Request) { r.Verb, r.Resource, r.Namespace = "list", "configmaps", "ns1" }, "other", "b-mine"},
		{"subresource named", func(r *Request) { r.Verb, r.Resource, r.Subresource, r.Namespace = "get", "pods", "log", "ns1" }, "other", "b-mine"},
		{"subresource not named", func(r *Request) { r.Verb, r.Resource, r.Subresource, r.Namespace = "get", "pods", "status", "ns1" }, "other", "service-accounts"},
		{"verb not named", func(r *Request) { r.Verb, r.Resource, r.Namespace = "delete", "configmaps", "ns1" }, "other", "service-accounts"},
		{"other namespace", func(r *Request) { r.Verb, r.Resource, r.Namespace = "get", "configmaps", "ns2" }, "other", "service-accounts"},
		{"cluster scope", func(r *Request) { r.Verb, r.Resource = "list", "nodes" }, "other", "cluster"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sa(tc.user)
			tc.mod(&r)
			if cl, _ := c.Classify(&r); cl.FlowSchema != tc.want {
				t.Errorf("classified into %s, want %s", cl.FlowSchema, tc.want)
			}
		})
	}
}

func TestNonResourceURLs(t *testing.T) {
	rule := &flowcontrolv1.NonResourcePolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/apis/*"}}
	for path, want := range map[string]bool{"/healthz": true, "/healthz/etcd": false, "/apis/": true, "/apis/apps": true, "/api": false} {
		if got := matchesNonResourceRule(rule, &Request{Verb: "get", Path: path}); got != want {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	if matchesNonResourceRule(rule, &Request{Verb: "post", Path: "/healthz"}) {
		t.Error("post matched a get-only rule")
	}
}

// TestMandatoryWithoutStoredObjects: before the configuration is read (or
// after someone deletes them) the exempt and catch-all objects apply.
func TestMandatoryWithoutStoredObjects(t *testing.T) {
	mfs, mpl := fcreg.MandatoryConfig()
	c := New(Options{ServerConcurrencyLimit: 600, MandatoryFlowSchemas: mfs, MandatoryPriorityLevels: mpl})
	if cl, _ := c.Classify(&Request{User: "alice", Groups: authenticated, Verb: "get", Path: "/version"}); cl.FlowSchema != "catch-all" {
		t.Errorf("alice: %+v", cl)
	}
	if cl, _ := c.Classify(&Request{User: "admin", Groups: []string{"system:masters"}, Verb: "get", Path: "/version"}); cl.PriorityLevel != "exempt" {
		t.Errorf("admin: %+v", cl)
	}
	// catch-all has all the seats then.
	if nominal, _, _ := c.Limits("catch-all"); nominal != 600 {
		t.Errorf("catch-all nominal seats %d, want 600", nominal)
	}
}

// TestNominalLimits: the seats of each default level, from 600, are
// those kube-apiserver v1.37.2 reports (apiserver_flowcontrol_
// nominal_limit_seats, lower_limit_seats and upper_limit_seats of the
// reference server).
func TestNominalLimits(t *testing.T) {
	c := newDefault(t)
	want := map[string]limits{
		"catch-all": {13, 13, 613, 13}, "exempt": {0, 0, 600, 0}, "global-default": {49, 24, 649, 49},
		"leader-election": {25, 25, 625, 25}, "node-high": {98, 73, 698, 98}, "system": {74, 50, 674, 74},
		"workload-high": {98, 49, 698, 98}, "workload-low": {245, 24, 845, 245},
	}
	for name, w := range want {
		lv := c.cur.Load().levels[name]
		if lv == nil || lv.limits != w {
			t.Errorf("%s: got %+v, want %+v", name, lv, w)
		}
	}
}
