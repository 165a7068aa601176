package ctrltest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

// Pods is the test client of pods.
func (e *Env) Pods(ns string) *rest.Resource[*corev1.Pod, *corev1.PodList] {
	return rest.For[*corev1.Pod, *corev1.PodList](e.Client, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace(ns)
}

// Services is the test client of services.
func (e *Env) Services(ns string) *rest.Resource[*corev1.Service, *corev1.ServiceList] {
	return rest.For[*corev1.Service, *corev1.ServiceList](e.Client, corev1.SchemeGroupVersion.WithResource("services"), true).Namespace(ns)
}

// Endpoints is the test client of endpoints.
func (e *Env) Endpoints(ns string) *rest.Resource[*corev1.Endpoints, *corev1.EndpointsList] {
	return rest.For[*corev1.Endpoints, *corev1.EndpointsList](e.Client, corev1.SchemeGroupVersion.WithResource("endpoints"), true).Namespace(ns)
}

// PodSpec describes a pod the test runs "by hand": its status is written
// by the test, as a kubelet would.
type PodSpec struct {
	Name      string
	Labels    map[string]string
	IP        string
	Ready     bool
	Node      string
	Hostname  string
	Subdomain string
	Ports     []corev1.ContainerPort
	// Finalizer keeps the pod (terminating) after a delete.
	Finalizer bool
}

// CreatePod creates the pod and writes its Running status with IP and
// readiness.
func (e *Env) CreatePod(ns string, s PodSpec) *corev1.Pod {
	e.T.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec: corev1.PodSpec{NodeName: s.Node, Hostname: s.Hostname, Subdomain: s.Subdomain,
			Containers: []corev1.Container{{Name: "c", Image: "img", Ports: s.Ports}}},
	}
	if s.Finalizer {
		p.Finalizers = []string{"test.setpoint.dev/hold"}
	}
	out, err := e.Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return e.SetPodStatus(ns, out.Name, s.IP, s.Ready, corev1.PodRunning)
}

// SetPodStatus writes the pod's phase, IP and Ready condition.
func (e *Env) SetPodStatus(ns, name, ip string, ready bool, phase corev1.PodPhase) *corev1.Pod {
	e.T.Helper()
	ctx := context.Background()
	for range 20 {
		p, err := e.Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			e.T.Fatal(err)
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Phase = phase
		p.Status.PodIP = ip
		p.Status.PodIPs = nil
		if ip != "" {
			p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		}
		cond := corev1.PodCondition{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}
		replaced := false
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				if p.Status.Conditions[i].Status == st {
					cond.LastTransitionTime = p.Status.Conditions[i].LastTransitionTime
				}
				p.Status.Conditions[i] = cond
				replaced = true
			}
		}
		if !replaced {
			p.Status.Conditions = append(p.Status.Conditions, cond)
		}
		out, err := e.Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
	}
	e.T.Fatalf("status of pod %s kept conflicting", name)
	return nil
}

// ReleasePod removes the test finalizer so a terminating pod goes.
func (e *Env) ReleasePod(ns, name string) {
	e.T.Helper()
	ctx := context.Background()
	for range 20 {
		p, err := e.Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return
		}
		p.Finalizers = nil
		if _, err = e.Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	e.T.Fatal(fmt.Errorf("release pod %s kept conflicting", name))
}

// CreateNode creates a node with the given labels.
func (e *Env) CreateNode(name string, labels map[string]string) {
	e.T.Helper()
	nodes := rest.For[*corev1.Node, *corev1.NodeList](e.Client, corev1.SchemeGroupVersion.WithResource("nodes"), false)
	if _, err := nodes.Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		e.T.Fatal(err)
	}
}
