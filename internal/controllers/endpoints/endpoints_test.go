package endpoints

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// now deletes at once (no kubelet confirms a graceful deletion here).
var now = metav1.DeleteOptions{GracePeriodSeconds: new(int64)}

func start(t *testing.T) *ctrltest.Env {
	return ctrltest.Start(t, func(e *ctrltest.Env) error { return Add(e.Mgr, Options{}) })
}

func addr(ip, pod, node, host string) string { return fmt.Sprintf("%s/%s/%s/%s", ip, pod, node, host) }

// summary renders subsets as port-set -> ready / not-ready addresses.
func summary(ep *corev1.Endpoints) string {
	out := ""
	for _, ss := range ep.Subsets {
		out += "["
		for _, p := range ss.Ports {
			out += fmt.Sprintf("%s:%d/%s ", p.Name, p.Port, p.Protocol)
		}
		out += "] ready:"
		for _, a := range ss.Addresses {
			out += " " + addr(a.IP, a.TargetRef.Name, *a.NodeName, a.Hostname)
		}
		out += " notready:"
		for _, a := range ss.NotReadyAddresses {
			out += " " + addr(a.IP, a.TargetRef.Name, *a.NodeName, a.Hostname)
		}
		out += ";"
	}
	return out
}

func (w waiter) endpoints(name, want string) *corev1.Endpoints {
	w.env.T.Helper()
	var got *corev1.Endpoints
	w.env.Eventually("endpoints "+name, func() error {
		ep, err := w.env.Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = ep
		if s := summary(ep); s != want {
			return fmt.Errorf("got  %s\nwant %s", s, want)
		}
		return nil
	})
	return got
}

type waiter struct{ env *ctrltest.Env }

// TestEndpointsFollowPods: ready and not-ready addresses, terminating and
// finished pods left out, named target ports resolved per pod into
// separate subsets, labels and the trigger-time annotation; then the
// Service's deletion removes its Endpoints.
func TestEndpointsFollowPods(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	w := waiter{env}
	sel := map[string]string{"app": "web"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
			{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090)},
		}},
	}
	if _, err := env.Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	http8080 := []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	env.CreatePod(ns, ctrltest.PodSpec{Name: "a", Labels: sel, IP: "10.0.0.1", Ready: true, Node: "n1", Ports: http8080})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "b", Labels: sel, IP: "10.0.0.2", Ready: false, Node: "n2", Ports: http8080})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "c", Labels: sel, IP: "10.0.0.3", Ready: true, Node: "n1",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8181}}})
	// No "http" port: only the numeric one.
	env.CreatePod(ns, ctrltest.PodSpec{Name: "d", Labels: sel, IP: "10.0.0.4", Ready: true, Node: "n2"})
	// Not selected, no IP, finished: absent.
	env.CreatePod(ns, ctrltest.PodSpec{Name: "other", Labels: map[string]string{"app": "x"}, IP: "10.0.0.9", Ready: true})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "noip", Labels: sel, Ready: true})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "done", Labels: sel, IP: "10.0.0.5", Ready: true, Ports: http8080})
	env.SetPodStatus(ns, "done", "10.0.0.5", false, corev1.PodSucceeded)

	want := "[http:8080/TCP metrics:9090/TCP ] ready: 10.0.0.1/a/n1/ notready: 10.0.0.2/b/n2/;" +
		"[http:8181/TCP metrics:9090/TCP ] ready: 10.0.0.3/c/n1/ notready:;" +
		"[metrics:9090/TCP ] ready: 10.0.0.4/d/n2/ notready:;"
	ep := w.endpoints("web", want)
	if ep.Labels["team"] != "a" || len(ep.Labels) != 1 {
		t.Fatalf("labels %v, want the Service's", ep.Labels)
	}
	if _, err := time.Parse(time.RFC3339Nano, ep.Annotations[corev1.EndpointsLastChangeTriggerTime]); err != nil {
		t.Fatalf("trigger time annotation: %v (%v)", err, ep.Annotations)
	}

	// b becomes ready; a starts terminating (kept by a finalizer).
	env.SetPodStatus(ns, "b", "10.0.0.2", true, corev1.PodRunning)
	env.CreatePod(ns, ctrltest.PodSpec{Name: "e", Labels: sel, IP: "10.0.0.6", Ready: true, Node: "n1", Ports: http8080, Finalizer: true})
	w.endpoints("web", "[http:8080/TCP metrics:9090/TCP ] ready: 10.0.0.1/a/n1/ 10.0.0.2/b/n2/ 10.0.0.6/e/n1/ notready:;"+
		"[http:8181/TCP metrics:9090/TCP ] ready: 10.0.0.3/c/n1/ notready:;"+
		"[metrics:9090/TCP ] ready: 10.0.0.4/d/n2/ notready:;")
	if err := env.Pods(ns).Delete(ctx, "e", now); err != nil {
		t.Fatal(err)
	}
	w.endpoints("web", "[http:8080/TCP metrics:9090/TCP ] ready: 10.0.0.1/a/n1/ 10.0.0.2/b/n2/ notready:;"+
		"[http:8181/TCP metrics:9090/TCP ] ready: 10.0.0.3/c/n1/ notready:;"+
		"[metrics:9090/TCP ] ready: 10.0.0.4/d/n2/ notready:;")
	env.ReleasePod(ns, "e")

	// Deleted by hand: recreated.
	old, err := env.Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Endpoints(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("recreated", func() error {
		ep, err := env.Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ep.UID == old.UID {
			return fmt.Errorf("old object")
		}
		return nil
	})

	if err := env.Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("endpoints deleted with the service", func() error {
		_, err := env.Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}

// TestHeadlessAndPublishNotReady: a headless Service without ports lists
// addresses with no ports, hostnames for pods whose subdomain names it,
// the headless label; publishNotReadyAddresses lists every pod as ready,
// terminating ones included.
func TestHeadlessAndPublishNotReady(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	w := waiter{env}
	sel := map[string]string{"app": "db"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{Selector: sel, ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true}}
	if _, err := env.Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.CreatePod(ns, ctrltest.PodSpec{Name: "db-0", Labels: sel, IP: "10.1.0.1", Ready: true, Node: "n1", Hostname: "db-0", Subdomain: "db"})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "db-1", Labels: sel, IP: "10.1.0.2", Ready: false, Node: "n1", Hostname: "db-1", Subdomain: "other"})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "db-2", Labels: sel, IP: "10.1.0.3", Ready: true, Node: "n2", Finalizer: true})
	if err := env.Pods(ns).Delete(ctx, "db-2", now); err != nil {
		t.Fatal(err)
	}
	ep := w.endpoints("db", "[] ready: 10.1.0.1/db-0/n1/db-0 10.1.0.2/db-1/n1/ 10.1.0.3/db-2/n2/ notready:;")
	if v, ok := ep.Labels[corev1.IsHeadlessService]; !ok || v != "" {
		t.Fatalf("labels %v, want %s=\"\"", ep.Labels, corev1.IsHeadlessService)
	}
	env.ReleasePod(ns, "db-2")
	w.endpoints("db", "[] ready: 10.1.0.1/db-0/n1/db-0 10.1.0.2/db-1/n1/ notready:;")
}

// TestSelectorlessLeftAlone: a Service without a selector gets no
// Endpoints, and the ones a user writes are kept as written.
func TestSelectorlessLeftAlone(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}
	if _, err := env.Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A Service with a selector, synced after "ext" was: proves the
	// controller ran.
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waiter{env}.endpoints("probe", "")
	if _, err := env.Endpoints(ns).Get(ctx, "ext", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("endpoints of a selectorless service: %v", err)
	}
	mine := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}}, Ports: []corev1.EndpointPort{{Port: 443, Protocol: corev1.ProtocolTCP}}}}}
	created, err := env.Endpoints(ns).Create(ctx, mine, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcNow, err := env.Services(ns).Get(ctx, "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcNow.Labels = map[string]string{"touched": "yes"}
	if _, err := env.Services(ns).Update(ctx, svcNow, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	got, err := env.Endpoints(ns).Get(ctx, "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != created.ResourceVersion || !equality.Semantic.DeepEqual(got.Subsets, created.Subsets) {
		t.Fatalf("user's endpoints changed: %+v", got)
	}
}

// TestTruncate: over 1000 addresses, ready ones are kept first and each
// subset keeps its share.
func TestTruncate(t *testing.T) {
	mk := func(n int, prefix string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, n)
		for i := range out {
			out[i].IP = fmt.Sprintf("%s.%d.%d", prefix, i/250, i%250)
		}
		return out
	}
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{
		{Addresses: mk(600, "10.0"), NotReadyAddresses: mk(100, "10.1")},
		{Addresses: mk(200, "10.2"), NotReadyAddresses: mk(300, "10.3")},
	}}
	if !Truncate(ep) {
		t.Fatal("1200 addresses not truncated")
	}
	// 800 ready kept; 200 not-ready slots shared 100:300 -> 50 and 150.
	got := []int{len(ep.Subsets[0].Addresses), len(ep.Subsets[0].NotReadyAddresses),
		len(ep.Subsets[1].Addresses), len(ep.Subsets[1].NotReadyAddresses)}
	if fmt.Sprint(got) != "[600 50 200 150]" {
		t.Fatalf("kept %v", got)
	}
	ep = &corev1.Endpoints{Subsets: []corev1.EndpointSubset{
		{Addresses: mk(900, "10.0"), NotReadyAddresses: mk(10, "10.1")},
		{Addresses: mk(300, "10.2")},
	}}
	Truncate(ep)
	got = []int{len(ep.Subsets[0].Addresses), len(ep.Subsets[0].NotReadyAddresses), len(ep.Subsets[1].Addresses)}
	if fmt.Sprint(got) != "[750 0 250]" {
		t.Fatalf("kept %v", got)
	}
	small := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: mk(1000, "10.0")}}}
	if Truncate(small) {
		t.Fatal("1000 addresses truncated")
	}
}
