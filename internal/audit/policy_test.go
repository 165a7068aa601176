package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// testPolicy exercises every kind of match, first match winning.
const testPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
omitManagedFields: true
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  userGroups: ["system:nodes"]
  resources:
  - group: ""
    resources: ["events"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
    resourceNames: ["special"]
  omitManagedFields: false
- level: Metadata
  resources:
  - group: ""
    resources: ["pods/log", "pods/status"]
- level: Request
  resources:
  - group: "*"
    resources: ["*/scale"]
- level: Request
  resources:
  - group: "apps"
    resources: ["deployments/*"]
- level: Metadata
  omitStages: ["ResponseStarted"]
  namespaces: ["kube-system"]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
- level: None
  nonResourceURLs: ["*"]
- level: Request
  resources:
  - group: "rbac.authorization.k8s.io"
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete"]
  namespaces: ["prod"]
`

func res(verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{User: authorizer.User{Name: "alice", Groups: []string{"devs"}},
		Verb: verb, ResourceRequest: true, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func nonres(verb, path string) authorizer.Attributes {
	return authorizer.Attributes{User: authorizer.User{Name: "alice"}, Verb: verb, Path: path}
}

func TestPolicyEvaluate(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy), nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := res("watch", "", "endpoints", "", "", "")
	proxy.User = authorizer.User{Name: "system:kube-proxy"}
	proxyList := proxy
	proxyList.Verb = "list"
	node := res("create", "", "events", "", "default", "")
	node.User = authorizer.User{Name: "system:node:n1", Groups: []string{"system:nodes"}}
	cases := []struct {
		name  string
		attrs authorizer.Attributes
		level Level
		omit  []Stage
		omf   bool
	}{
		{"user and verb", proxy, LevelNone, []Stage{StageRequestReceived}, true},
		{"user, other verb falls through to the catch-all", proxyList, LevelNone, []Stage{StageRequestReceived}, true},
		{"group and resource", node, LevelNone, []Stage{StageRequestReceived}, true},
		{"resourceNames match", res("get", "", "configmaps", "", "default", "special"), LevelRequestResponse, []Stage{StageRequestReceived}, false},
		{"resourceNames miss", res("get", "", "configmaps", "", "default", "other"), LevelNone, []Stage{StageRequestReceived}, true},
		{"resourceNames on a list (no name)", res("list", "", "configmaps", "", "default", ""), LevelNone, []Stage{StageRequestReceived}, true},
		{"subresource", res("get", "", "pods", "log", "default", "p"), LevelMetadata, []Stage{StageRequestReceived}, true},
		{"resource without the subresource", res("get", "", "pods", "", "default", "p"), LevelNone, []Stage{StageRequestReceived}, true},
		{"*/scale in any group", res("update", "apps", "statefulsets", "scale", "default", "s"), LevelRequest, []Stage{StageRequestReceived}, true},
		{"deployments/* matches the resource itself", res("get", "apps", "deployments", "", "default", "d"), LevelRequest, []Stage{StageRequestReceived}, true},
		{"deployments/* matches its subresources", res("get", "apps", "deployments", "status", "default", "d"), LevelRequest, []Stage{StageRequestReceived}, true},
		{"deployments/* is of group apps only", res("get", "extensions", "deployments", "", "default", "d"), LevelNone, []Stage{StageRequestReceived}, true},
		{"namespace, stages joined", res("get", "", "secrets", "", "kube-system", "x"), LevelMetadata, []Stage{StageRequestReceived, StageResponseStarted}, true},
		{"non-resource prefix", nonres("get", "/healthz/etcd"), LevelMetadata, []Stage{StageRequestReceived}, true},
		{"non-resource exact", nonres("get", "/version"), LevelMetadata, []Stage{StageRequestReceived}, true},
		{"non-resource prefix is not a substring", nonres("get", "/versions"), LevelNone, []Stage{StageRequestReceived}, true},
		{"non-resource *", nonres("get", "/metrics"), LevelNone, []Stage{StageRequestReceived}, true},
		{"namespace rule ignores non-resource requests", nonres("get", "/api/v1"), LevelNone, []Stage{StageRequestReceived}, true},
		{"group with no resources: every resource", res("delete", "rbac.authorization.k8s.io", "roles", "", "x", "r"), LevelRequest, []Stage{StageRequestReceived}, true},
		{"verbs and namespace", res("patch", "apps", "daemonsets", "", "prod", "d"), LevelRequestResponse, []Stage{StageRequestReceived}, true},
		{"verbs and namespace, read", res("get", "apps", "daemonsets", "", "prod", "d"), LevelNone, []Stage{StageRequestReceived}, true},
		{"cluster-scoped is namespace \"\"", res("patch", "", "nodes", "", "", "n"), LevelNone, []Stage{StageRequestReceived}, true},
	}
	for _, c := range cases {
		got := p.Evaluate(c.attrs)
		slices.Sort(got.OmitStages)
		slices.Sort(c.omit)
		if got.Level != c.level || !slices.Equal(got.OmitStages, c.omit) || got.OmitManagedFields != c.omf {
			t.Errorf("%s: got %+v, want level %s omit %v omitManagedFields %v", c.name, got, c.level, c.omit, c.omf)
		}
	}
}

func TestPolicyEmptyRuleMatchesAll(t *testing.T) {
	p, err := ParsePolicy([]byte(`{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []authorizer.Attributes{res("get", "", "pods", "", "a", "b"), nonres("get", "/x")} {
		if got := p.Evaluate(a).Level; got != LevelMetadata {
			t.Errorf("%+v: level %s, want Metadata", a, got)
		}
	}
}

func TestParsePolicyRefusals(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"no kind", `{"apiVersion":"audit.k8s.io/v1","rules":[{"level":"None"}]}`, "Object 'Kind' is missing"},
		{"other group", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]", "unknown group version field audit.k8s.io/v1beta1"},
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []", "loaded illegal policy with 0 rules"},
		{"missing level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{users: [a]}]", "rules[0].level: Required value"},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]",
			`rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Done]\nrules: [{level: None}]",
			`omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic`},
		{"url without slash", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz]}]",
			"non-resource URL rules must begin with a '/' character"},
		{"inner wildcard", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/a*/b']}]",
			"non-resource URL wildcards '*' must be the final character of the rule"},
		{"urls and resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/a'], namespaces: [x]}]",
			"rules cannot apply to both regular resources and non-resource URLs"},
		{"names without resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: '', resourceNames: [x]}]}]",
			"using resourceNames requires at least one resource"},
		{"group with a version", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: 'rbac.authorization.k8s.io/v1'}]}]",
			"rules[0].resources.group: Invalid value"},
		{"not YAML", "rules: [", "failed decoding"},
	}
	for _, c := range cases {
		_, err := ParsePolicy([]byte(c.doc), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestParsePolicyLenient(t *testing.T) {
	// An unknown field is tolerated, as kube-apiserver's lenient decoding.
	p, err := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  unknownField: 1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 1 || p.Rules[0].Level != LevelMetadata {
		t.Fatalf("rules %+v", p.Rules)
	}
}

func TestLevelLess(t *testing.T) {
	order := []Level{LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse}
	for i, a := range order {
		for j, b := range order {
			if a.Less(b) != (i < j) {
				t.Errorf("%s.Less(%s) = %v", a, b, a.Less(b))
			}
		}
	}
}
