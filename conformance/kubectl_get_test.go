package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlGet: kubectl get -o yaml|json|jsonpath|wide|name, the
// server-printed columns, --show-labels, -l selectors and -A.
func TestKubectlGet(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()
	kubectl(t, env, krDeployment("web", 3, "nginx:1.25"), "apply", "-f", "-")
	kubectl(t, env, "", "rollout", "status", "deployment/web", "--timeout=60s")

	t.Run("-o json and -o yaml are the same object, and it round-trips", func(t *testing.T) {
		var fromJSON, fromYAML appsv1.Deployment
		krJSON(t, env, &fromJSON, "get", "deployment", "web", "-o", "json")
		y := kubectl(t, env, "", "get", "deployment", "web", "-o", "yaml")
		if err := yaml.UnmarshalStrict([]byte(y), &fromYAML); err != nil {
			t.Fatalf("-o yaml: %v\n%s", err, y)
		}
		for _, d := range []appsv1.Deployment{fromJSON, fromYAML} {
			if d.Kind != "Deployment" || d.APIVersion != "apps/v1" || d.Name != "web" || d.Namespace != "default" || d.UID == "" ||
				d.ResourceVersion == "" || d.Generation != 1 || !reflect.DeepEqual(d.Labels, map[string]string{"app": "web", "tier": "front"}) {
				t.Errorf("type/metadata = %+v %+v", d.TypeMeta, d.ObjectMeta)
			}
			c := d.Spec.Template.Spec.Containers
			if *d.Spec.Replicas != 3 || d.Spec.Selector.MatchLabels["app"] != "web" || len(c) != 1 || c[0].Name != "main" ||
				c[0].Image != "nginx:1.25" || len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 80 {
				t.Errorf("spec = %+v", d.Spec)
			}
			if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 10 {
				t.Errorf("defaults: strategy %+v, revisionHistoryLimit %v", d.Spec.Strategy, d.Spec.RevisionHistoryLimit)
			}
		}
		if !reflect.DeepEqual(fromJSON.ObjectMeta, fromYAML.ObjectMeta) || !reflect.DeepEqual(fromJSON.Spec, fromYAML.Spec) {
			t.Errorf("-o json and -o yaml differ:\njson %+v\nyaml %+v", fromJSON, fromYAML)
		}
		live, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if live.UID != fromJSON.UID || !reflect.DeepEqual(live.Spec, fromJSON.Spec) {
			t.Errorf("kubectl's object differs from client-go's:\n%+v\n%+v", fromJSON.Spec, live.Spec)
		}
		// What get printed goes back unchanged: replace is a no-op write.
		out := kubectl(t, env, y, "replace", "-f", "-")
		if out != "deployment.apps/web replaced\n" {
			t.Errorf("replace -f <get -o yaml> = %q", out)
		}
		after, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.Generation != 1 || !reflect.DeepEqual(after.Spec, live.Spec) {
			t.Errorf("replace with the object as read changed it: generation %d", after.Generation)
		}
	})

	t.Run("-o jsonpath", func(t *testing.T) {
		got := kubectl(t, env, "", "get", "deployment", "web", "-o", `jsonpath={.metadata.name} {.spec.replicas} {.spec.template.spec.containers[0].image} {.status.readyReplicas}`)
		if got != "web 3 nginx:1.25 3" {
			t.Errorf("jsonpath = %q", got)
		}
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range pods.Items {
			want = append(want, p.Name+" "+p.Spec.NodeName+" "+p.Status.PodIP+" "+string(p.Status.Phase))
		}
		slices.Sort(want)
		out := kubectl(t, env, "", "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.podIP} {.status.phase}{"\n"}{end}`)
		got2 := krLines(out)
		slices.Sort(got2)
		if len(want) != 3 || !slices.Equal(got2, want) {
			t.Errorf("jsonpath range over pods = %q, want %q", got2, want)
		}
		if got := kubectl(t, env, "", "get", "pods", "-l", "app=web", "-o", "name"); len(krLines(got)) != 3 || !strings.HasPrefix(got, "pod/web-") {
			t.Errorf("-o name = %q", got)
		}
	})

	t.Run("server-printed columns and -o wide", func(t *testing.T) {
		// The columns are the server's: kubectl asks for a Table and gets
		// one (-v=8 logs the response body, quoted).
		r := kubectlRun(t, env, "", "get", "deployments", "-v=8")
		if r.Err != nil || !strings.Contains(r.Stderr, "application/json;as=Table;v=v1;g=meta.k8s.io") || !strings.Contains(r.Stderr, `{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\"`) {
			t.Errorf("get deployments did not get a server-side Table: %v\n%s", r.Err, r.Stderr)
		}
		h, rows := krTable(kubectl(t, env, "", "get", "deployments"))
		if !slices.Equal(h, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}) || len(rows) != 1 || !slices.Equal(rows[0][:4], []string{"web", "3/3", "3", "3"}) {
			t.Errorf("get deployments: %v %v", h, rows)
		}
		h, rows = krTable(kubectl(t, env, "", "get", "deployments", "-o", "wide"))
		if !slices.Equal(h, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}) ||
			len(rows) != 1 || !slices.Equal(slices.Delete(slices.Clone(rows[0]), 4, 5), []string{"web", "3/3", "3", "3", "main", "nginx:1.25", "app=web"}) {
			t.Errorf("get deployments -o wide: %v %v", h, rows)
		}
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]corev1.Pod{}
		for _, p := range pods.Items {
			byName[p.Name] = p
		}
		h, rows = krTable(kubectl(t, env, "", "get", "pods"))
		if !slices.Equal(h, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}) || len(rows) != 3 {
			t.Fatalf("get pods: %v %v", h, rows)
		}
		for _, r := range rows {
			if _, ok := byName[r[0]]; !ok || r[1] != "1/1" || r[2] != "Running" || r[3] != "0" {
				t.Errorf("pod row %v", r)
			}
		}
		h, rows = krTable(kubectl(t, env, "", "get", "pods", "-o", "wide"))
		if !slices.Equal(h, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"}) || len(rows) != 3 {
			t.Fatalf("get pods -o wide: %v %v", h, rows)
		}
		nodes := map[string]bool{}
		for _, r := range rows {
			p := byName[r[0]]
			if len(r) != 9 || r[5] != p.Status.PodIP || p.Status.PodIP == "" || r[6] != p.Spec.NodeName || p.Spec.NodeName == "" || r[7] != "<none>" || r[8] != "<none>" {
				t.Errorf("wide row %v; pod IP %q node %q", r, p.Status.PodIP, p.Spec.NodeName)
			}
			nodes[r[6]] = true
		}
		if len(nodes) != 3 {
			t.Errorf("3 replicas on 3 nodes spread over %v", nodes)
		}
		h, rows = krTable(kubectl(t, env, "", "get", "nodes"))
		if !slices.Equal(h, []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}) || len(rows) != 3 {
			t.Fatalf("get nodes: %v %v", h, rows)
		}
		for i, r := range rows {
			if r[0] != "node-"+string(rune('0'+i)) || r[1] != "Ready" || r[2] != "<none>" {
				t.Errorf("node row %v", r)
			}
		}
		// INTERNAL-IP is the address the node reports (a simulated node's
		// kubelet endpoint), EXTERNAL-IP <none>.
		h, rows = krTable(kubectl(t, env, "", "get", "nodes", "-o", "wide"))
		if !slices.Equal(h[:7], []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP"}) || len(rows) != 3 {
			t.Fatalf("get nodes -o wide: %v %v", h, rows)
		}
		for _, r := range rows {
			n, err := cs.CoreV1().Nodes().Get(ctx, r[0], metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a := n.Status.Addresses; len(a) != 1 || a[0].Type != corev1.NodeInternalIP || r[5] != a[0].Address || r[6] != "<none>" {
				t.Errorf("get nodes -o wide row %v; the node's addresses %v", r, a)
			}
		}
	})

	t.Run("--show-labels, -l and -A", func(t *testing.T) {
		kubectl(t, env, "", "create", "namespace", "other")
		for _, cm := range []struct{ ns, name, labels string }{
			{"default", "front-a", "tier=front"},
			{"default", "back-a", "tier=back"},
			{"default", "plain", ""},
			{"other", "front-b", "tier=front"},
			{"other", "cache-b", "tier=cache"},
		} {
			kubectl(t, env, "", "create", "configmap", cm.name, "-n", cm.ns)
			if cm.labels != "" {
				kubectl(t, env, "", "label", "configmap", cm.name, "-n", cm.ns, cm.labels, "team=x")
			}
		}
		// kube-controller-manager publishes kube-root-ca.crt (no labels)
		// in every namespace: it matches the selectors without "tier".
		waitNames(t, env, []string{"get", "configmaps", "--field-selector", "metadata.name=kube-root-ca.crt"}, []string{"kube-root-ca.crt"})
		for sel, want := range map[string][]string{
			"tier=front":           {"front-a"},
			"tier!=front":          {"back-a", "kube-root-ca.crt", "plain"},
			"tier in (front,back)": {"back-a", "front-a"},
			"!tier":                {"kube-root-ca.crt", "plain"},
			"tier,team=x":          {"back-a", "front-a"},
		} {
			out := kubectlRun(t, env, "", "get", "configmaps", "-l", sel)
			got := krNames(out.Stdout)
			if out.Err != nil || !slices.Equal(got, want) {
				t.Errorf("get configmaps -l %q = %v, want %v (%v %s)", sel, got, want, out.Err, out.Stderr)
			}
		}
		// Only kinds whose Kubernetes strategy keeps a generation have one.
		for _, obj := range []string{"configmap/front-a", "namespace/other", "node/node-0", "service/kubernetes"} {
			var m struct{ Metadata map[string]any }
			krJSON(t, env, &m, "get", obj, "-o", "json")
			if g, ok := m.Metadata["generation"]; ok {
				t.Errorf("%s has metadata.generation %v; Kubernetes keeps none for its kind", obj, g)
			}
		}
		h, rows := krTable(kubectl(t, env, "", "get", "configmaps", "front-a", "--show-labels"))
		if !slices.Equal(h, []string{"NAME", "DATA", "AGE", "LABELS"}) || len(rows) != 1 || rows[0][3] != "team=x,tier=front" {
			t.Errorf("--show-labels: %v %v", h, rows)
		}
		h, rows = krTable(kubectl(t, env, "", "get", "deployment", "web", "--show-labels"))
		if h[len(h)-1] != "LABELS" || len(rows) != 1 || rows[0][len(rows[0])-1] != "app=web,tier=front" {
			t.Errorf("deployment --show-labels: %v %v", h, rows)
		}
		h, rows = krTable(kubectl(t, env, "", "get", "configmaps", "-A", "-l", "tier"))
		var got []string
		for _, r := range rows {
			got = append(got, r[0]+"/"+r[1])
		}
		slices.Sort(got)
		if !slices.Equal(h, []string{"NAMESPACE", "NAME", "DATA", "AGE"}) || !slices.Equal(got, []string{"default/back-a", "default/front-a", "other/cache-b", "other/front-b"}) {
			t.Errorf("get configmaps -A -l tier: %v %v", h, got)
		}
		_, rows = krTable(kubectl(t, env, "", "get", "pods", "--all-namespaces"))
		if len(rows) != 3 || rows[0][0] != "default" {
			t.Errorf("get pods --all-namespaces: %v", rows)
		}
		if got := krNames(kubectl(t, env, "", "get", "configmaps", "-n", "other", "-l", "tier")); !slices.Equal(got, []string{"cache-b", "front-b"}) {
			t.Errorf("get configmaps -n other -l tier = %v", got)
		}
	})
}

// TestKubectlGetRaw: kubectl get --raw on API, health, version and metrics
// paths.
func TestKubectlGetRaw(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)

	var nsList corev1.NamespaceList
	krJSON(t, env, &nsList, "get", "--raw", "/api/v1/namespaces")
	var names []string
	for _, ns := range nsList.Items {
		names = append(names, ns.Name)
	}
	slices.Sort(names)
	if nsList.Kind != "NamespaceList" || nsList.APIVersion != "v1" || nsList.ResourceVersion == "" ||
		!slices.Equal(names, []string{"default", "kube-node-lease", "kube-public", "kube-system"}) {
		t.Errorf("/api/v1/namespaces: %s %s rv=%q %v", nsList.Kind, nsList.APIVersion, nsList.ResourceVersion, names)
	}
	var one corev1.Namespace
	krJSON(t, env, &one, "get", "--raw", "/api/v1/namespaces/kube-system")
	if one.Kind != "Namespace" || one.Name != "kube-system" || one.Status.Phase != corev1.NamespaceActive {
		t.Errorf("/api/v1/namespaces/kube-system: %+v", one)
	}

	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if got := kubectl(t, env, "", "get", "--raw", p); got != "ok" {
			t.Errorf("%s = %q, want ok", p, got)
		}
	}

	var v struct{ Major, Minor, GitVersion, GoVersion, Platform string }
	krJSON(t, env, &v, "get", "--raw", "/version")
	sv, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor == "" || v.GitVersion != sv.GitVersion || !strings.HasPrefix(v.GitVersion, "v1."+v.Minor+".") || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("/version = %+v", v)
	}

	metrics := kubectl(t, env, "", "get", "--raw", "/metrics")
	for _, want := range []string{
		"# TYPE apiserver_current_inflight_requests gauge",
		`apiserver_current_inflight_requests{request_kind="readOnly"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Every sample line is "name{labels} value" under a # TYPE line.
	typed := map[string]bool{}
	for _, l := range krLines(metrics) {
		if f := strings.Fields(l); strings.HasPrefix(l, "# TYPE ") && len(f) == 4 {
			typed[f[2]] = true
			continue
		}
		if strings.HasPrefix(l, "#") {
			continue
		}
		name := l[:strings.IndexAny(l, "{ ")]
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !typed[name] && !typed[base] {
			t.Errorf("/metrics sample without a # TYPE: %q", l)
			break
		}
	}

	r := krFails(t, env, "", "get", "--raw", "/api/v1/namespaces/missing")
	if !strings.Contains(r.Stderr, `namespaces "missing" not found`) {
		t.Errorf("get --raw of a missing namespace: %s", r.Stderr)
	}
}

// krWatch starts kubectl with args in the background; it returns its
// stdout as a reader and a stop function that ends it.
func krWatch(t *testing.T, env *testenv.Environment, args ...string) (io.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	cmd := exec.CommandContext(ctx, kubectlPath(t), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		cancel()
		_ = cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Logf("kubectl %s stderr: %s", strings.Join(args, " "), s)
		}
	}
	t.Cleanup(stop)
	return stdout, stop
}

// TestKubectlGetWatch: kubectl get -w --output-watch-events prints ADDED,
// MODIFIED and DELETED for changes made while it watches, as a table and
// as JSON watch events.
func TestKubectlGetWatch(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})

	t.Run("table", func(t *testing.T) {
		kubectl(t, env, "", "create", "configmap", "before", "--from-literal=a=1")
		out, stop := krWatch(t, env, "get", "configmaps", "-l", "watched", "-w", "--output-watch-events")
		defer stop()
		kubectl(t, env, "", "label", "configmap", "before", "watched=yes")
		lines := make(chan []string, 100)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- strings.Fields(sc.Text())
			}
			close(lines)
		}()
		next := func() []string {
			t.Helper()
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("kubectl get -w ended")
				}
				return l
			case <-time.After(30 * time.Second):
				t.Fatal("no watch line in 30 s")
			}
			return nil
		}
		// The header first; the label makes "before" enter the selector:
		// to a watch with a label selector that is ADDED (it may come from
		// the initial list or as an event, depending on timing).
		if h := next(); !slices.Equal(h, []string{"EVENT", "NAME", "DATA", "AGE"}) {
			t.Fatalf("header %v", h)
		}
		if l := next(); !slices.Equal(l[:3], []string{"ADDED", "before", "1"}) {
			t.Fatalf("first event %v", l)
		}
		kubectl(t, env, "", "create", "configmap", "w1", "--from-literal=a=1")
		kubectl(t, env, "", "label", "configmap", "w1", "watched=yes")
		if l := next(); !slices.Equal(l[:3], []string{"ADDED", "w1", "1"}) {
			t.Fatalf("label into the selector: %v, want ADDED w1", l)
		}
		kubectl(t, env, "", "patch", "configmap", "w1", "--type", "merge", "-p", `{"data":{"b":"2"}}`)
		if l := next(); !slices.Equal(l[:3], []string{"MODIFIED", "w1", "2"}) {
			t.Fatalf("data added: %v, want MODIFIED w1 2", l)
		}
		kubectl(t, env, "", "delete", "configmap", "w1")
		if l := next(); !slices.Equal(l[:3], []string{"DELETED", "w1", "2"}) {
			t.Fatalf("delete: %v, want DELETED w1", l)
		}
		// Leaving the selector is a DELETED too.
		kubectl(t, env, "", "label", "configmap", "before", "watched-")
		if l := next(); !slices.Equal(l[:3], []string{"DELETED", "before", "1"}) {
			t.Fatalf("label removed: %v, want DELETED before", l)
		}
	})

	t.Run("json", func(t *testing.T) {
		kubectl(t, env, "", "create", "namespace", "wj")
		out, stop := krWatch(t, env, "get", "deployments", "-n", "wj", "-w", "--output-watch-events", "-o", "json")
		defer stop()
		type event struct {
			Type   string
			Object appsv1.Deployment
		}
		events := make(chan event, 100)
		go func() {
			dec := json.NewDecoder(out)
			for {
				var e event
				if err := dec.Decode(&e); err != nil {
					close(events)
					return
				}
				events <- e
			}
		}()
		next := func() event {
			t.Helper()
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("kubectl get -w -o json ended")
				}
				return e
			case <-time.After(30 * time.Second):
				t.Fatal("no watch event in 30 s")
			}
			return event{}
		}
		// Until the first event, the watch may not be established yet:
		// create after a moment, and accept the create from either the
		// initial list or the watch.
		time.Sleep(500 * time.Millisecond)
		kubectl(t, env, krDeployment("wd", 1, "nginx"), "apply", "-n", "wj", "-f", "-")
		e := next()
		if e.Type != "ADDED" || e.Object.Kind != "Deployment" || e.Object.Name != "wd" || e.Object.Namespace != "wj" || *e.Object.Spec.Replicas != 1 {
			t.Fatalf("first event %s %s %+v", e.Type, e.Object.Name, e.Object.TypeMeta)
		}
		kubectl(t, env, "", "scale", "deployment", "wd", "-n", "wj", "--replicas=2")
		// Status updates by the controller come as MODIFIED as well; wait
		// for the one carrying replicas 2 and then for availability.
		sawScale := false
		for !sawScale {
			e = next()
			if e.Type != "MODIFIED" || e.Object.Name != "wd" {
				t.Fatalf("event %s %s, want MODIFIED wd", e.Type, e.Object.Name)
			}
			sawScale = *e.Object.Spec.Replicas == 2
		}
		for e.Object.Status.AvailableReplicas != 2 {
			e = next()
			if e.Type != "MODIFIED" {
				t.Fatalf("event %s before availability", e.Type)
			}
		}
		kubectl(t, env, "", "delete", "deployment", "wd", "-n", "wj")
		for e.Type != "DELETED" {
			e = next()
			if e.Type != "MODIFIED" && e.Type != "DELETED" {
				t.Fatalf("event %s, want MODIFIED until DELETED", e.Type)
			}
		}
		if e.Object.Name != "wd" || e.Object.Kind != "Deployment" {
			t.Errorf("DELETED %+v", e.Object.ObjectMeta)
		}
	})
}
