package endpointslice

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
)

// TestRandomConvergence drives pods (created, ready, unready, terminating,
// deleted, relabelled) and the Service (selector, ports) at random, with
// both the endpoints and the EndpointSlice controllers running, then
// checks that the Endpoints and the slices list exactly what the pods and
// the Service say, with no endpoint in two slices.
func TestRandomConvergence(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	env := start(t, Options{MaxEndpointsPerSlice: 4}, true)
	ctx := context.Background()
	svcSpec := func(tier bool, extraPort bool) corev1.ServiceSpec {
		sel := map[string]string{"app": "rnd"}
		if tier {
			sel["tier"] = "front"
		}
		ports := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}
		if extraPort {
			ports = append(ports, corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090)})
		}
		return corev1.ServiceSpec{Selector: sel, Ports: ports}
	}
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "rnd"}, Spec: svcSpec(false, true)},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	type podState struct{ exists, held bool }
	pods := map[string]*podState{}
	ip := 0
	for step := range 120 {
		name := fmt.Sprintf("p%02d", rng.Intn(24))
		st := pods[name]
		if st == nil {
			st = &podState{}
			pods[name] = st
		}
		switch op := rng.Intn(10); {
		case !st.exists:
			lbls := map[string]string{"app": "rnd"}
			if rng.Intn(2) == 0 {
				lbls["tier"] = "front"
			}
			var ports []corev1.ContainerPort
			if r := rng.Intn(3); r < 2 {
				ports = []corev1.ContainerPort{{Name: "http", ContainerPort: int32(8080 + r)}}
			}
			ip++
			st.held = rng.Intn(3) == 0
			env.CreatePod(ns, ctrltest.PodSpec{Name: name, Labels: lbls, IP: fmt.Sprintf("10.9.%d.%d", ip/200, ip%200+1),
				Ready: rng.Intn(2) == 0, Node: []string{"n1", "n2"}[rng.Intn(2)], Ports: ports, Finalizer: st.held})
			st.exists = true
		case op < 4:
			p, err := env.Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.DeletionTimestamp == nil {
				env.SetPodStatus(ns, name, p.Status.PodIP, rng.Intn(2) == 0, corev1.PodRunning)
			}
		case op < 6:
			if err := env.Pods(ns).Delete(ctx, name, now); err != nil {
				t.Logf("step %d: delete %s: %v", step, name, err)
			}
			if !st.held {
				st.exists = false
			}
		case op < 7:
			if st.held {
				env.ReleasePod(ns, name)
				st.held = false
				p, err := env.Pods(ns).Get(ctx, name, metav1.GetOptions{})
				st.exists = err == nil && p.DeletionTimestamp == nil
			}
		case op < 8:
			p, err := env.Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				if p.Labels["tier"] == "" {
					p.Labels["tier"] = "front"
				} else {
					delete(p.Labels, "tier")
				}
				_, _ = env.Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
			}
		default:
			svc, err := env.Services(ns).Get(ctx, "rnd", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			spec := svcSpec(rng.Intn(2) == 0, rng.Intn(2) == 0)
			svc.Spec.Selector, svc.Spec.Ports = spec.Selector, spec.Ports
			if _, err := env.Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
				t.Logf("step %d: update service: %v", step, err)
			}
		}
		if rng.Intn(4) == 0 {
			time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
		}
	}
	env.Eventually("endpoints and slices converge", func() error { return converged(env) })
	n, list := 0, slicesOf(env, "rnd")
	for _, s := range list {
		n += len(s.Endpoints)
	}
	t.Logf("converged on %d endpoints in %d slices", n, len(list))
}

// converged compares the Endpoints and slices of "rnd" with what the
// server's pods and Service say, computed here from scratch.
func converged(env *ctrltest.Env) error {
	ctx := context.Background()
	svc, err := env.Services(ns).Get(ctx, "rnd", metav1.GetOptions{})
	if err != nil {
		return err
	}
	podList, err := env.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return err
	}
	var wantEP, wantSlices []string
	for _, p := range podList.Items {
		if p.Status.PodIP == "" {
			continue
		}
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		var ports []string
		for _, sp := range svc.Spec.Ports {
			n := sp.TargetPort.IntVal
			if sp.TargetPort.Type == intstr.String {
				n = 0
				for _, cp := range p.Spec.Containers[0].Ports {
					if cp.Name == sp.TargetPort.StrVal {
						n = cp.ContainerPort
					}
				}
			}
			if n != 0 {
				ports = append(ports, fmt.Sprintf("%s:%d", sp.Name, n))
				if p.DeletionTimestamp == nil {
					wantEP = append(wantEP, fmt.Sprintf("%s/%s:%d/%v", p.Status.PodIP, sp.Name, n, ready))
				}
			}
		}
		terminating := p.DeletionTimestamp != nil
		sort.Strings(ports)
		wantSlices = append(wantSlices, fmt.Sprintf("%s/%s/[%s]/%v%v%v", p.Status.PodIP, p.Name, strings.Join(ports, " "),
			ready && !terminating, ready, terminating))
	}
	ep, err := env.Endpoints(ns).Get(ctx, "rnd", metav1.GetOptions{})
	if err != nil {
		return err
	}
	var gotEP []string
	for _, ss := range ep.Subsets {
		for _, port := range ss.Ports {
			for _, a := range ss.Addresses {
				gotEP = append(gotEP, fmt.Sprintf("%s/%s:%d/true", a.IP, port.Name, port.Port))
			}
			for _, a := range ss.NotReadyAddresses {
				gotEP = append(gotEP, fmt.Sprintf("%s/%s:%d/false", a.IP, port.Name, port.Port))
			}
		}
	}
	if err := sameSet("endpoints", gotEP, wantEP); err != nil {
		return err
	}
	var gotSlices []string
	seen := map[string]string{}
	for _, s := range slicesOf(env, "rnd") {
		if len(s.Endpoints) > 4 {
			return fmt.Errorf("slice %s holds %d endpoints", s.Name, len(s.Endpoints))
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d", *p.Name, *p.Port))
		}
		sort.Strings(ports)
		for _, e := range s.Endpoints {
			if other, dup := seen[e.TargetRef.Name]; dup {
				return fmt.Errorf("pod %s in slices %s and %s", e.TargetRef.Name, other, s.Name)
			}
			seen[e.TargetRef.Name] = s.Name
			gotSlices = append(gotSlices, fmt.Sprintf("%s/%s/[%s]/%v%v%v", e.Addresses[0], e.TargetRef.Name, strings.Join(ports, " "),
				*e.Conditions.Ready, *e.Conditions.Serving, *e.Conditions.Terminating))
		}
	}
	return sameSet("slices", gotSlices, wantSlices)
}

func sameSet(what string, got, want []string) error {
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s:\ngot  %v\nwant %v", what, got, want)
	}
	return nil
}
