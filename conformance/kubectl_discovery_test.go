package conformance

import (
	"os"
	"path/filepath"
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

	// Fields of kinds across the groups print as against kube-apiserver
	// v1.37.2, byte for byte (testdata/kubectl/explain/<path>.txt; where
	// the file is <path>@<group>_<version>.txt, with that --api-version).
	files, err := filepath.Glob(filepath.Join("testdata", "kubectl", "explain", "*.txt"))
	if err != nil || len(files) < 20 {
		t.Fatalf("golden explain outputs: %d (%v)", len(files), err)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// <path>[@<group>_<version>].txt
		path, version, ok := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".txt"), "@")
		args := []string{"explain", path}
		if ok {
			args = append(args, "--api-version="+strings.Replace(version, "_", "/", 1))
		}
		if got := kubectl(t, env, "", args...); got != string(want) {
			t.Errorf("kubectl %s:\n%s\nkube-apiserver v1.37.2:\n%s", strings.Join(args, " "), got, want)
		}
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

// TestKubectlAPIResources: kubectl api-resources prints what it prints
// against kube-apiserver v1.37.2, byte for byte: -o wide --sort-by=name
// (testdata/kubernetes-api-v1.37.txt), -o wide in the server's order, and
// with filters (testdata/kubectl/api-resources-*.txt); every row agrees
// with client-go's discovery; short names resolve.
func TestKubectlAPIResources(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)

	golden := func(t *testing.T, file string, args ...string) string {
		t.Helper()
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		got := kubectl(t, env, "", args...)
		if got != string(want) {
			t.Errorf("kubectl %s differs from kube-apiserver v1.37.2's:\n%s\nwant:\n%s", strings.Join(args, " "), got, want)
		}
		return got
	}
	wide := golden(t, "kubernetes-api-v1.37.txt", "api-resources", "-o", "wide", "--sort-by=name")
	for file, args := range map[string][]string{
		"api-resources-wide.txt":                             {"-o", "wide"},
		"api-resources-namespaced-false-name.txt":            {"--namespaced=false", "-o", "name"},
		"api-resources-api-group-apps-name.txt":              {"--api-group=apps", "-o", "name"},
		"api-resources-categories-all.txt":                   {"--categories=all"},
		"api-resources-categories-api-extensions-name.txt":   {"--categories=api-extensions", "-o", "name"},
		"api-resources-api-group-rbac-wide.txt":              {"--api-group=rbac.authorization.k8s.io", "-o", "wide"},
		"api-resources-verbs-create-get-namespaced-name.txt": {"--verbs=create,get", "--namespaced=true", "-o", "name"},
		"api-resources-api-group-core-sorted-kind.txt":       {"--api-group=", "--sort-by=kind"},
	} {
		golden(t, filepath.Join("kubectl", file), append([]string{"api-resources"}, args...)...)
	}

	// Every row is a resource client-go discovers (its preferred
	// versions), and vice versa; two rows share a name (events of v1 and
	// events.k8s.io/v1), so rows are keyed by name and group-version.
	header, rows := tableCells(wide)
	if !slices.Equal(header, []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"}) {
		t.Fatalf("header %q", header)
	}
	got := map[string][]string{}
	for _, r := range rows {
		got[r[0]+" "+r[2]] = r
	}
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	discovered := 0
	for _, l := range lists {
		for _, r := range l.APIResources {
			discovered++
			want := []string{r.Name, strings.Join(r.ShortNames, ","), l.GroupVersion, map[bool]string{true: "true", false: "false"}[r.Namespaced],
				r.Kind, strings.Join(sorted(r.Verbs), ","), strings.Join(r.Categories, ",")}
			if g := got[r.Name+" "+l.GroupVersion]; !slices.Equal(g, want) {
				t.Errorf("client-go discovers %q; kubectl shows %q", want, g)
			}
		}
	}
	if discovered != len(rows) || len(rows) != 71 {
		t.Errorf("kubectl shows %d resources, client-go discovers %d, kube-apiserver serves 71", len(rows), discovered)
	}

	// Short names resolve to their resource.
	for short, path := range map[string]string{"cm": "/api/v1/configmaps", "deploy": "/apis/apps/v1/deployments", "rs": "/apis/apps/v1/replicasets",
		"svc": "/api/v1/services", "ns": "/api/v1/namespaces", "no": "/api/v1/nodes", "po": "/api/v1/pods", "ev": "/api/v1/events",
		"crd": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "sa": "/api/v1/serviceaccounts", "pvc": "/api/v1/persistentvolumeclaims",
		"pv": "/api/v1/persistentvolumes", "rc": "/api/v1/replicationcontrollers", "quota": "/api/v1/resourcequotas", "limits": "/api/v1/limitranges",
		"ep": "/api/v1/endpoints", "cj": "/apis/batch/v1/cronjobs", "pdb": "/apis/policy/v1/poddisruptionbudgets", "pc": "/apis/scheduling.k8s.io/v1/priorityclasses",
		"sc": "/apis/storage.k8s.io/v1/storageclasses", "ing": "/apis/networking.k8s.io/v1/ingresses", "netpol": "/apis/networking.k8s.io/v1/networkpolicies",
		"csr": "/apis/certificates.k8s.io/v1/certificatesigningrequests", "vac": "/apis/storage.k8s.io/v1/volumeattributesclasses",
		"ip": "/apis/networking.k8s.io/v1/ipaddresses", "hpa": "/apis/autoscaling/v2/horizontalpodautoscalers", "cs": "/api/v1/componentstatuses"} {
		r := kubectlRun(t, env, "", "get", short, "-A", "-v=6")
		if r.Err != nil || !strings.Contains(r.Stderr, path+"?") {
			t.Errorf("get %s: want a GET of %s: %v %s", short, path, r.Err, r.Stderr)
		}
	}
}

func sorted(s metav1.Verbs) []string {
	c := slices.Clone([]string(s))
	slices.Sort(c)
	return c
}

// TestKubectlAPIVersions: kubectl api-versions lists kube-apiserver
// v1.37.2's 23 group-versions (testdata/kubectl/api-versions.txt, byte
// for byte), as client-go's discovery sees them.
func TestKubectlAPIVersions(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	want, err := os.ReadFile(filepath.Join("testdata", "kubectl", "api-versions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := kubectl(t, env, "", "api-versions")
	if out != string(want) {
		t.Errorf("api-versions:\n%s\nkube-apiserver v1.37.2:\n%s", out, want)
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	discovered := metav1.ExtractGroupVersions(groups)
	slices.Sort(discovered)
	if got := krLines(out); !slices.Equal(got, discovered) || len(got) != 23 {
		t.Errorf("api-versions = %q, client-go discovers %q", got, discovered)
	}
}
