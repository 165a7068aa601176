package metrics_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/nodeagent"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// start runs a server and an agent of two nodes on a fake clock.
func start(t *testing.T) (*ctrltest.Env, *clocktesting.FakeClock, *nodeagent.Agent) {
	clk := clocktesting.NewFakeClock(epoch)
	var agent *nodeagent.Agent
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		a, err := nodeagent.New(e.Mgr, nodeagent.Options{Count: 2, Clock: clk, ClientCA: e.Server.API.CA().CertPEM})
		agent = a
		return err
	})
	select {
	case <-agent.Registered():
	case <-time.After(30 * time.Second):
		t.Fatal("nodes not registered")
	}
	return env, clk, agent
}

// runPod creates a pod of one container requesting cpu and 64Mi, bound to
// node, and waits until it runs.
func runPod(t *testing.T, e *ctrltest.Env, name, node, cpu string, labels map[string]string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}}}}}}
	if _, err := e.Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually(name+" running", func() error {
		p, err := e.Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && p.Status.Phase != corev1.PodRunning {
			err = errNot(name + " is " + string(p.Status.Phase))
		}
		return err
	})
}

type errNot string

func (e errNot) Error() string { return string(e) }

// get GETs path and decodes a 200 answer into out; it returns the code and
// body.
func get(t *testing.T, e *ctrltest.Env, path string, out any) (int, string) {
	t.Helper()
	code, body, _ := e.Server.Do(t, http.MethodGet, path, "", nil)
	if code == http.StatusOK && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return code, string(body)
}

func cpuOf(c metricsv1beta1.ContainerMetrics) string {
	q := c.Usage[corev1.ResourceCPU]
	return q.String()
}

// kubectl top reads: node and pod metrics from the containers' simulated
// usage, selectors, not-found errors worded as metrics-server's, a raised
// usage seen over the next window.
func TestResourceMetricsAPI(t *testing.T) {
	e, clk, _ := start(t)
	runPod(t, e, "web", "node-0", "200m", map[string]string{"app": "web"})
	runPod(t, e, "db", "node-1", "500m", map[string]string{"app": "db"})
	clk.Step(10 * time.Second)

	var pods metricsv1beta1.PodMetricsList
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", &pods); code != 200 {
		t.Fatalf("list pod metrics: %d %s", code, body)
	}
	if len(pods.Items) != 2 || pods.Items[0].Name != "db" || pods.Items[1].Name != "web" {
		t.Fatalf("pod metrics: %+v", pods.Items)
	}
	web := pods.Items[1]
	mem := web.Containers[0].Usage[corev1.ResourceMemory]
	if len(web.Containers) != 1 || cpuOf(web.Containers[0]) != "200m" || mem.String() != "64Mi" ||
		web.Labels["app"] != "web" || web.Window.Duration != 10*time.Second || !web.Timestamp.Time.Equal(clk.Now()) {
		t.Errorf("web metrics: %+v", web)
	}
	var nodes metricsv1beta1.NodeMetricsList
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1/nodes", &nodes); code != 200 || len(nodes.Items) != 2 {
		t.Fatalf("list node metrics: %d %s", code, body)
	}
	if cpu := nodes.Items[1].Usage[corev1.ResourceCPU]; nodes.Items[1].Name != "node-1" || cpu.String() != "500m" {
		t.Errorf("node-1 metrics: %+v", nodes.Items[1])
	}

	var sel metricsv1beta1.PodMetricsList
	get(t, e, "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Ddb", &sel)
	if len(sel.Items) != 1 || sel.Items[0].Name != "db" {
		t.Errorf("selected pod metrics: %+v", sel.Items)
	}
	var sel2 metricsv1beta1.NodeMetricsList
	get(t, e, "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3Dnode-0", &sel2)
	if len(sel2.Items) != 1 || sel2.Items[0].Name != "node-0" {
		t.Errorf("selected node metrics: %+v", sel2.Items)
	}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := e.Pods("default").Create(context.Background(), pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for path, msg := range map[string]string{
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending": `podmetrics.metrics.k8s.io "default/pending" not found`,
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope":    `pods "nope" not found`,
		"/apis/metrics.k8s.io/v1beta1/nodes/nope":                      `node "nope" not found`,
	} {
		code, body := get(t, e, path, nil)
		var st metav1.Status
		_ = json.Unmarshal([]byte(body), &st)
		if code != 404 || st.Message != msg || st.Reason != metav1.StatusReasonNotFound {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx", nil); code != 400 {
		t.Errorf("unsupported field selector: %d %s", code, body)
	}

	// A raised usage: the next window sees it whole.
	p, _ := e.Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
	p.Annotations = map[string]string{nodeagent.AnnotationCPUUsage: "800m"}
	if _, err := e.Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the agent sees the update
	clk.Step(15 * time.Second)
	var one metricsv1beta1.PodMetrics
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", &one); code != 200 {
		t.Fatalf("get web: %d %s", code, body)
	}
	if cpuOf(one.Containers[0]) != "800m" || one.Window.Duration != 15*time.Second {
		t.Errorf("web after raising its usage: %+v", one)
	}
	// The same instant again: the same answer.
	get(t, e, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", &one)
	if cpuOf(one.Containers[0]) != "800m" {
		t.Errorf("web at the same instant: %+v", one)
	}
}

// The metrics-server APIService may be created (its manifest does): the
// object is stored, the built-in group keeps serving.
func TestMetricsAPIService(t *testing.T) {
	e, clk, _ := start(t)
	runPod(t, e, "web", "node-0", "100m", nil)
	clk.Step(time.Second)
	apiservice := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io","labels":{"k8s-app":"metrics-server"}},
"spec":{"group":"metrics.k8s.io","version":"v1beta1","groupPriorityMinimum":100,"versionPriority":100,"insecureSkipTLSVerify":true,
"service":{"name":"metrics-server","namespace":"kube-system"}}}`
	code, body, _ := e.Server.Do(t, http.MethodPost, "/apis/apiregistration.k8s.io/v1/apiservices", "application/json", strings.NewReader(apiservice))
	if code != http.StatusCreated {
		t.Fatalf("create the APIService: %d %s", code, body)
	}
	var pods metricsv1beta1.PodMetricsList
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1/pods", &pods); code != 200 || len(pods.Items) != 1 {
		t.Errorf("pod metrics with the APIService: %d %s", code, body)
	}
	var rl metav1.APIResourceList
	if code, body := get(t, e, "/apis/metrics.k8s.io/v1beta1", &rl); code != 200 || len(rl.APIResources) != 2 {
		t.Errorf("discovery: %d %s", code, body)
	}
	for _, r := range rl.APIResources {
		if strings.Join(r.Verbs, ",") != "get,list" {
			t.Errorf("%s verbs %v", r.Name, r.Verbs)
		}
	}
}
