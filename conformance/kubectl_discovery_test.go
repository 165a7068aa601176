package conformance

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlExplain: kubectl explain reads the OpenAPI v3 documents:
// field paths, types, descriptions, required markers.
func TestKubectlExplain(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})

	out := kubectl(t, env, "", "explain", "deployment.spec.strategy")
	head := krLines(out)
	if len(head) < 4 || head[0] != "GROUP:      apps" || head[1] != "KIND:       Deployment" || head[2] != "VERSION:    v1" ||
		head[3] != "FIELD: strategy <DeploymentStrategy>" {
		t.Errorf("explain deployment.spec.strategy header:\n%s", out)
	}
	desc := strings.Join(krSection(out, "DESCRIPTION"), "\n")
	if !strings.Contains(desc, "The deployment strategy to use to replace existing pods with new ones.") {
		t.Errorf("DESCRIPTION:\n%s", desc)
	}
	// The enum values are kube-apiserver's (internal/openapi's generated facts).
	if got := explainFields(out); !slices.Equal(got, []string{"rollingUpdate <RollingUpdateDeployment>", "type <string>", "enum: Recreate, RollingUpdate"}) {
		t.Errorf("FIELDS of deployment.spec.strategy: %q", got)
	}

	out = kubectl(t, env, "", "explain", "pod.spec.containers")
	head = krLines(out)
	if len(head) < 3 || head[0] != "KIND:       Pod" || head[1] != "VERSION:    v1" || head[2] != "FIELD: containers <[]Container>" {
		t.Errorf("explain pod.spec.containers header:\n%s", out)
	}
	fields := explainFields(out)
	for _, want := range []string{"name <string> -required-", "image <string>", "ports <[]ContainerPort>", "env <[]EnvVar>",
		"resources <ResourceRequirements>", "livenessProbe <Probe>", "command <[]string>", "volumeMounts <[]VolumeMount>"} {
		if !slices.Contains(fields, want) {
			t.Errorf("explain pod.spec.containers lacks %q; fields %q", want, fields)
		}
	}
	if !slices.Contains(fields, "enum: Always, IfNotPresent, Never") {
		t.Errorf("explain pod.spec.containers shows no enum for imagePullPolicy: %q", fields)
	}
	names := slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return strings.HasPrefix(f, "enum: ") })
	if !slices.IsSorted(names) {
		t.Errorf("fields not sorted: %q", names)
	}

	// A deeper path, --recursive, and a field that does not exist.
	out = kubectl(t, env, "", "explain", "pod.spec.containers.ports.containerPort")
	if !strings.Contains(out, "FIELD: containerPort <integer>") || !strings.Contains(out, "Number of port to expose on the pod's IP address.") {
		t.Errorf("explain of a leaf:\n%s", out)
	}
	out = kubectl(t, env, "", "explain", "deployment.spec", "--recursive")
	for _, want := range []string{"  replicas\t<integer>", "  selector\t<LabelSelector> -required-", "    matchLabels\t<map[string]string>", "  template\t<PodTemplateSpec> -required-"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("explain deployment.spec --recursive lacks %q", want)
		}
	}
	r := krFails(t, env, "", "explain", "deployment.spec.nope")
	if r.Stderr != "error: field \"nope\" does not exist\n" {
		t.Errorf("explain of a missing field: %q", r.Stderr)
	}
	out = kubectl(t, env, "", "explain", "configmaps")
	if !strings.Contains(out, "KIND:       ConfigMap") || !strings.Contains(out, "  data\t<map[string]string>") {
		t.Errorf("explain configmaps:\n%s", out)
	}
}

// explainFields is the "name <type> [-required-]" of each field under
// FIELDS: in kubectl explain output.
func explainFields(out string) []string {
	var fs []string
	for _, l := range krSection(out, "FIELDS") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			fs = append(fs, strings.Join(strings.Fields(l), " "))
		}
	}
	return fs
}

// TestKubectlAPIResources: kubectl api-resources lists every served kind
// with its short names, group/version, scope and (with -o wide) verbs and
// categories; it agrees with client-go's discovery.
func TestKubectlAPIResources(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)

	all := "create,delete,deletecollection,get,list,patch,update,watch"
	want := map[string][]string{ // name -> SHORTNAMES APIVERSION NAMESPACED KIND VERBS [CATEGORIES]
		"configmaps":  {"cm", "v1", "true", "ConfigMap", all},
		"events":      {"ev", "v1", "true", "Event", all},
		"namespaces":  {"ns", "v1", "false", "Namespace", "create,delete,get,list,patch,update,watch"}, // no deletecollection, as Kubernetes
		"nodes":       {"no", "v1", "false", "Node", all},
		"pods":        {"po", "v1", "true", "Pod", all, "all"},
		"secrets":     {"", "v1", "true", "Secret", all},
		"services":    {"svc", "v1", "true", "Service", all, "all"},
		"deployments": {"deploy", "apps/v1", "true", "Deployment", all, "all"},
		"replicasets": {"rs", "apps/v1", "true", "ReplicaSet", all, "all"},
		"leases":      {"", "coordination.k8s.io/v1", "true", "Lease", all},
	}
	out := kubectl(t, env, "", "api-resources", "-o", "wide")
	lines := krLines(out)
	if strings.Join(strings.Fields(lines[0]), " ") != "NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES" {
		t.Fatalf("header %q", lines[0])
	}
	// Columns are fixed-width: cut each row at the header's offsets.
	var starts []int
	for _, col := range []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"} {
		starts = append(starts, strings.Index(lines[0], col))
	}
	got := map[string][]string{}
	for _, l := range lines[1:] {
		var cells []string
		for i, s := range starts {
			end := len(l)
			if i+1 < len(starts) && starts[i+1] < end {
				end = starts[i+1]
			}
			cell := ""
			if s < len(l) {
				cell = strings.TrimSpace(l[s:end])
			}
			cells = append(cells, cell)
		}
		if cells[6] == "" {
			cells = cells[:6]
		}
		got[cells[0]] = cells[1:]
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("api-resources row %s = %q, want %q", name, got[name], w)
		}
	}
	// Every row is a resource client-go discovers, and vice versa.
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	var discovered []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			discovered = append(discovered, r.Name)
			gv := l.GroupVersion
			if g, ok := got[r.Name]; !ok || g[1] != gv || g[2] != map[bool]string{true: "true", false: "false"}[r.Namespaced] || g[3] != r.Kind ||
				g[0] != strings.Join(r.ShortNames, ",") || g[4] != strings.Join(sorted(r.Verbs), ",") {
				t.Errorf("client-go discovers %s %s %+v; kubectl shows %q", gv, r.Name, r, g)
			}
		}
	}
	if len(discovered) != len(got) {
		t.Errorf("kubectl shows %d resources, client-go discovers %d", len(got), len(discovered))
	}

	if out := kubectl(t, env, "", "api-resources", "--namespaced=false", "-o", "name"); out != "namespaces\nnodes\ncustomresourcedefinitions.apiextensions.k8s.io\n" {
		t.Errorf("api-resources --namespaced=false -o name: %q", out)
	}
	if out := kubectl(t, env, "", "api-resources", "--api-group=apps", "-o", "name"); out != "deployments.apps\nreplicasets.apps\n" {
		t.Errorf("api-resources --api-group=apps: %q", out)
	}
	if got := krNames(kubectl(t, env, "", "api-resources", "--categories=all")); !slices.Equal(got, []string{"deployments", "pods", "replicasets", "services"}) {
		t.Errorf("api-resources --categories=all: %v", got)
	}
	// Short names resolve.
	for short, kind := range map[string]string{"cm": "configmaps", "deploy": "deployments.apps", "rs": "replicasets.apps", "svc": "services", "ns": "namespaces", "no": "nodes", "po": "pods", "ev": "events", "crd": "customresourcedefinitions.apiextensions.k8s.io"} {
		r := kubectlRun(t, env, "", "get", short, "-A", "-v=6")
		if r.Err != nil || !strings.Contains(r.Stderr, "/"+strings.Split(kind, ".")[0]+"?") {
			t.Errorf("get %s: %v %s", short, r.Err, r.Stderr)
		}
	}
}

func sorted(s metav1.Verbs) []string {
	c := slices.Clone([]string(s))
	slices.Sort(c)
	return c
}

// TestKubectlAPIVersions: kubectl api-versions lists every served
// group/version, as client-go's discovery sees them.
func TestKubectlAPIVersions(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	out := kubectl(t, env, "", "api-versions")
	got := krLines(out)
	for _, want := range []string{"apps/v1", "coordination.k8s.io/v1", "v1"} {
		if !slices.Contains(got, want) {
			t.Errorf("api-versions lacks %s: %q", want, got)
		}
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.ExtractGroupVersions(groups)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("api-versions = %q, client-go discovers %q", got, want)
	}
}
