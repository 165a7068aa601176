package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
      - name: %s
        image: busybox:1.36
`

// fields splits kubectl's table output into rows of columns, without the
// header.
func rows(out string) [][]string {
	var rs [][]string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		rs = append(rs, strings.Fields(line))
	}
	return rs
}

func names(out string) []string {
	var ns []string
	for _, r := range rows(out) {
		ns = append(ns, r[0])
	}
	return ns
}

func TestKubectl(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "bolt")

	t.Run("namespaces exist from the start", func(t *testing.T) {
		got := names(s.kubectl(t, "", "get", "namespaces"))
		for _, want := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			if !slices.Contains(got, want) {
				t.Errorf("namespace %s missing from %v", want, got)
			}
		}
	})

	t.Run("configmaps: create, get -l, chunked list, delete", func(t *testing.T) {
		for i := range 5 {
			s.kubectl(t, "", "create", "configmap", fmt.Sprintf("cm%d", i), fmt.Sprintf("--from-literal=k=%d", i))
		}
		s.kubectl(t, "", "label", "configmap", "cm3", "tier=gold")
		if got := names(s.kubectl(t, "", "get", "configmaps", "-l", "tier=gold")); !slices.Equal(got, []string{"cm3"}) {
			t.Errorf("get -l tier=gold = %v, want [cm3]", got)
		}
		// --show-labels and -L read the metadata the server puts in each
		// table row.
		if out := s.kubectl(t, "", "get", "configmap", "cm3", "--show-labels", "-L", "tier"); !strings.Contains(out, "tier=gold") || !strings.Contains(out, "TIER") {
			t.Errorf("get --show-labels -L tier:\n%s", out)
		}
		out := s.kubectl(t, "", "get", "configmaps", "--chunk-size=2", "-v=6")
		// -v=6 logs each request to stderr, stdout keeps the table.
		want := []string{"cm0", "cm1", "cm2", "cm3", "cm4"}
		if got := names(out); !slices.Equal(got, want) {
			t.Errorf("get --chunk-size=2 = %v, want %v", got, want)
		}
		_, logs, err := s.kubectlErr(t, "", "get", "configmaps", "--chunk-size=2", "-v=6")
		if err != nil || strings.Count(logs, "continue=") < 2 {
			t.Errorf("chunked list made %d continue requests, want >= 2 (err %v)", strings.Count(logs, "continue="), err)
		}
		if v := s.kubectl(t, "", "get", "configmap", "cm2", "-o", "jsonpath={.data.k}"); v != "2" {
			t.Errorf("cm2 data.k = %q, want 2", v)
		}
		s.kubectl(t, "", "delete", "configmap", "cm0")
		if _, stderr, err := s.kubectlErr(t, "", "get", "configmap", "cm0"); err == nil || !strings.Contains(stderr, "NotFound") {
			t.Errorf("get deleted configmap: err=%v stderr=%q, want NotFound", err, stderr)
		}
	})

	t.Run("deployments: apply twice (strategic merge), scale, get all", func(t *testing.T) {
		s.kubectl(t, fmt.Sprintf(deploymentYAML, "sidecar"), "apply", "-f", "-")
		out := s.kubectl(t, fmt.Sprintf(deploymentYAML, "logger"), "apply", "-f", "-")
		if !strings.Contains(out, "configured") {
			t.Errorf("second apply: %q, want configured", out)
		}
		got := s.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[*].name} {.metadata.generation}")
		if got != "nginx logger 2" {
			t.Errorf("containers and generation after re-apply = %q, want \"nginx logger 2\"", got)
		}
		s.kubectl(t, "", "scale", "deployment", "web", "--replicas=7")
		if got := s.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "7" {
			t.Errorf("replicas after scale = %q, want 7", got)
		}
		all := s.kubectl(t, "", "get", "all")
		for _, want := range []string{"service/kubernetes", "deployment.apps/web"} {
			if !strings.Contains(all, want) {
				t.Errorf("get all lacks %s:\n%s", want, all)
			}
		}
		header := strings.Fields(strings.SplitN(s.kubectl(t, "", "get", "deployments"), "\n", 2)[0])
		if !slices.Equal(header, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}) {
			t.Errorf("deployment columns = %v", header)
		}
		s.kubectl(t, "", "delete", "deployment", "web")
		if got := names(s.kubectl(t, "", "get", "deployments")); len(got) != 0 {
			t.Errorf("deployments after delete = %v", got)
		}
	})

	t.Run("pods: create, get -o wide, delete", func(t *testing.T) {
		s.kubectl(t, "", "run", "p1", "--image=nginx:1.25", "--labels=app=p")
		r := rows(s.kubectl(t, "", "get", "pods", "-o", "wide"))
		if len(r) != 1 || r[0][0] != "p1" || r[0][2] != "Pending" {
			t.Errorf("get pods -o wide rows = %v, want p1 Pending", r)
		}
		if got := names(s.kubectl(t, "", "get", "pods", "-l", "app=p")); !slices.Equal(got, []string{"p1"}) {
			t.Errorf("get pods -l app=p = %v", got)
		}
		s.kubectl(t, "", "delete", "pod", "p1")
		if got := names(s.kubectl(t, "", "get", "pods")); len(got) != 0 {
			t.Errorf("pods after delete = %v", got)
		}
	})

	t.Run("namespaces: create, use, delete turns Terminating and refuses new content", func(t *testing.T) {
		s.kubectl(t, "", "create", "namespace", "team-a")
		s.kubectl(t, "", "create", "configmap", "inside", "-n", "team-a")
		// Without the namespace controller (a later issue) a deleted
		// namespace stays Terminating, exactly as on a Kubernetes API server
		// with no controller manager; so do not wait for it to disappear.
		s.kubectl(t, "", "delete", "namespace", "team-a", "--wait=false")
		if phase := s.kubectl(t, "", "get", "namespace", "team-a", "-o", "jsonpath={.status.phase}"); phase != "Terminating" {
			t.Errorf("phase after delete = %q, want Terminating", phase)
		}
		_, stderr, err := s.kubectlErr(t, "", "create", "configmap", "late", "-n", "team-a")
		if err == nil || !strings.Contains(stderr, "being terminated") {
			t.Errorf("create in terminating namespace: err=%v stderr=%q", err, stderr)
		}
		_, stderr, err = s.kubectlErr(t, "", "create", "configmap", "x", "-n", "missing")
		if err == nil || !strings.Contains(stderr, `namespaces "missing" not found`) {
			t.Errorf("create in missing namespace: err=%v stderr=%q", err, stderr)
		}
	})

	t.Run("explain and server-side field validation", func(t *testing.T) {
		out := s.kubectl(t, "", "explain", "deployment.spec.strategy")
		if !strings.Contains(out, "rollingUpdate") || !strings.Contains(out, "DeploymentStrategy") {
			t.Errorf("explain deployment.spec.strategy:\n%s", out)
		}
		bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\ndata:\n  a: b\nspec:\n  oops: 1\n"
		_, stderr, err := s.kubectlErr(t, bad, "apply", "-f", "-")
		if err == nil || !strings.Contains(stderr, `unknown field "spec"`) {
			t.Errorf("apply with an unknown field: err=%v stderr=%q, want a strict decoding error", err, stderr)
		}
		if _, _, err := s.kubectlErr(t, "", "get", "configmap", "strict"); err == nil {
			t.Error("the refused configmap was created")
		}
	})

	t.Run("apply, get -l and get --chunk-size=2 on every kind", func(t *testing.T) {
		manifests := map[string]string{
			"configmaps": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels: {set: a}\ndata:\n  k: v\n",
			"pods":       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {set: a}\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
			"deployments": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  labels: {set: a}\nspec:\n  selector:\n    matchLabels: {app: %[1]s}\n" +
				"  template:\n    metadata:\n      labels: {app: %[1]s}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n",
			"namespaces": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {set: a}\n",
		}
		for kind, manifest := range manifests {
			var want []string
			for i := range 3 {
				name := fmt.Sprintf("ap-%s-%d", strings.TrimSuffix(kind, "s"), i)
				if out := s.kubectl(t, fmt.Sprintf(manifest, name), "apply", "-f", "-"); !strings.Contains(out, "created") {
					t.Errorf("apply %s: %q", name, out)
				}
				want = append(want, name)
			}
			if got := names(s.kubectl(t, "", "get", kind, "-l", "set=a")); !slices.Equal(got, want) {
				t.Errorf("get %s -l set=a = %v, want %v", kind, got, want)
			}
			_, logs, err := s.kubectlErr(t, "", "get", kind, "-l", "set=a", "--chunk-size=2", "-v=6")
			if err != nil || !strings.Contains(logs, "limit=2") || !strings.Contains(logs, "continue=") {
				t.Errorf("get %s --chunk-size=2 did not page (err %v)", kind, err)
			}
			if got := names(s.kubectl(t, "", "get", kind, "-l", "set=a", "--chunk-size=2")); !slices.Equal(got, want) {
				t.Errorf("get %s --chunk-size=2 = %v, want %v", kind, got, want)
			}
		}
	})

	t.Run("get -w sees creates, updates and deletes", func(t *testing.T) {
		for _, kind := range []string{"configmaps", "pods", "deployments", "namespaces"} {
			t.Run(kind, func(t *testing.T) { watchKind(t, s, kind) })
		}
	})
}

// watchKind runs `kubectl get KIND -w --output-watch-events` while it
// creates, changes and deletes one object, and checks the events it prints.
func watchKind(t *testing.T, s *server, kind string) {
	name := "w-" + strings.TrimSuffix(kind, "s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"--kubeconfig", s.kubeconfig, "get", kind, "-w", "--output-watch-events", "--field-selector", "metadata.name=" + name}
	cmd := exec.CommandContext(ctx, kubectlPath(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var events []string
	next := func() {
		t.Helper()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl get -w ended early; events %v", events)
				}
				f := strings.Fields(line)
				if len(f) < 2 || f[0] == "EVENT" {
					continue
				}
				if f[1] != name {
					t.Errorf("event for %s, want only %s", f[1], name)
				}
				events = append(events, f[0])
				return
			case <-ctx.Done():
				t.Fatalf("timed out; events so far %v", events)
			}
		}
	}
	// The object shows up as ADDED whether the watch started before or
	// after the create (initial list); later changes must come as events.
	steps := map[string][3][]string{
		"configmaps":  {{"create", "configmap", name}, {"label", "configmap", name, "step=2"}, {"delete", "configmap", name}},
		"pods":        {{"run", name, "--image=nginx"}, {"label", "pod", name, "step=2"}, {"delete", "pod", name}},
		"deployments": {{"create", "deployment", name, "--image=nginx"}, {"scale", "deployment", name, "--replicas=2"}, {"delete", "deployment", name}},
		"namespaces":  {{"create", "namespace", name}, {"label", "namespace", name, "step=2"}, {"delete", "namespace", name, "--wait=false"}},
	}[kind]
	want := []string{"ADDED", "MODIFIED", "DELETED"}
	if kind == "namespaces" {
		want = []string{"ADDED", "MODIFIED", "MODIFIED"} // Terminating, held by its finalizer
	}
	s.kubectl(t, "", steps[0]...)
	next()
	s.kubectl(t, "", steps[1]...)
	next()
	s.kubectl(t, "", steps[2]...)
	next()
	if !slices.Equal(events, want) {
		t.Errorf("events = %v, want %v", events, want)
	}
}
