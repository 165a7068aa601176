package endpointslice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
)

// TestSlicesFollowPods: metadata, conditions, zones, named ports and
// hostnames; terminating pods stay with terminating=true; the placeholder
// of a Service without endpoints.
func TestSlicesFollowPods(t *testing.T) {
	env := start(t, Options{}, false)
	ctx := context.Background()
	sel := map[string]string{"app": "web"}
	h2c := "kubernetes.io/h2c"
	svc, err := env.Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), AppProtocol: &h2c},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := waitSlices(env, "web", "IPv4 [] placeholder")
	s := got[0]
	ref := metav1.GetControllerOf(&s)
	if !strings.HasPrefix(s.Name, "web-") || s.GenerateName != "web-" || ref == nil || ref.Kind != "Service" || ref.UID != svc.UID ||
		s.Labels["team"] != "a" || s.Labels[discoveryv1.LabelServiceName] != "web" || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy {
		t.Fatalf("slice metadata: %+v", s.ObjectMeta)
	}
	env.CreatePod(ns, ctrltest.PodSpec{Name: "a", Labels: sel, IP: "10.0.0.1", Ready: true, Node: "n1",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "b", Labels: sel, IP: "10.0.0.2", Ready: false, Node: "n2",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "c", Labels: sel, IP: "10.0.0.3", Ready: true, Node: "n1", Finalizer: true,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9000}}, Hostname: "c", Subdomain: "web"})
	env.CreatePod(ns, ctrltest.PodSpec{Name: "gone-node", Labels: sel, IP: "10.0.0.4", Ready: true, Node: "nowhere"})
	got = waitSlices(env, "web", strings.Join([]string{
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.1/a/n1/zone-a/-/TTF",
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.2/b/n2/zone-b/-/FFF",
		"IPv4 [http:9000/TCP(kubernetes.io/h2c)] 10.0.0.3/c/n1/zone-a/c/TTF",
	}, "\n"))
	// The first slice with endpoints took the placeholder's name (an update,
	// as Kubernetes' reconciler turns a create plus a delete into): a
	// reader never lists the placeholder beside its replacement.
	if !slices.ContainsFunc(got, func(x discoveryv1.EndpointSlice) bool { return x.Name == s.Name }) {
		t.Errorf("placeholder %s was replaced, not reused: %v", s.Name, sliceNames(got))
	}
	if err := env.Pods(ns).Delete(ctx, "c", now); err != nil {
		t.Fatal(err)
	}
	env.SetPodStatus(ns, "b", "10.0.0.2", true, corev1.PodRunning)
	got = waitSlices(env, "web", strings.Join([]string{
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.1/a/n1/zone-a/-/TTF",
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.2/b/n2/zone-b/-/TTF",
		"IPv4 [http:9000/TCP(kubernetes.io/h2c)] 10.0.0.3/c/n1/zone-a/c/FTT",
	}, "\n"))
	for _, s := range got {
		if _, err := time.Parse(time.RFC3339Nano, s.Annotations[corev1.EndpointsLastChangeTriggerTime]); err != nil {
			t.Fatalf("slice %s trigger time: %v", s.Name, err)
		}
	}
	env.ReleasePod(ns, "c")
	waitSlices(env, "web", strings.Join([]string{
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.1/a/n1/zone-a/-/TTF",
		"IPv4 [http:8080/TCP(kubernetes.io/h2c)] 10.0.0.2/b/n2/zone-b/-/TTF",
	}, "\n"))
	// The service's labels follow.
	cur, err := env.Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"team": "b"}
	if _, err := env.Services(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("labels follow the service", func() error {
		for _, s := range slicesOf(env, "web") {
			if s.Labels["team"] != "b" {
				return fmt.Errorf("labels %v", s.Labels)
			}
		}
		return nil
	})
}

// TestSliceCapacityAndChurn: with at most 10 per slice, 25 endpoints take
// three slices; one pod's change rewrites only its slice; a new pod goes into an
// existing slice with room rather than a new one.
func TestSliceCapacityAndChurn(t *testing.T) {
	env := start(t, Options{MaxEndpointsPerSlice: 10}, false)
	ctx := context.Background()
	sel := map[string]string{"app": "big"}
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		env.CreatePod(ns, ctrltest.PodSpec{Name: fmt.Sprintf("p%02d", i), Labels: sel, IP: fmt.Sprintf("10.2.0.%d", i+1), Ready: true, Node: "n1"})
	}
	var before []discoveryv1.EndpointSlice
	env.Eventually("25 endpoints", func() error {
		before = slicesOf(env, "big")
		n := 0
		for _, s := range before {
			if len(s.Endpoints) > 10 {
				return fmt.Errorf("slice %s has %d endpoints", s.Name, len(s.Endpoints))
			}
			n += len(s.Endpoints)
		}
		if n != 25 || len(before) != 3 {
			return fmt.Errorf("%d endpoints in %d slices", n, len(before))
		}
		return nil
	})
	// Let the controller settle (pods created one by one).
	time.Sleep(300 * time.Millisecond)
	before = slicesOf(env, "big")
	holder := ""
	for _, s := range before {
		for _, ep := range s.Endpoints {
			if ep.TargetRef.Name == "p07" {
				holder = s.Name
			}
		}
	}
	env.SetPodStatus(ns, "p07", "10.2.0.8", false, corev1.PodRunning)
	env.Eventually("p07 not ready", func() error {
		for _, s := range slicesOf(env, "big") {
			for _, ep := range s.Endpoints {
				if ep.TargetRef.Name == "p07" && !*ep.Conditions.Ready {
					return nil
				}
			}
		}
		return fmt.Errorf("still ready")
	})
	for _, s := range slicesOf(env, "big") {
		for _, b := range before {
			if b.Name == s.Name && b.Name != holder && b.ResourceVersion != s.ResourceVersion {
				t.Fatalf("slice %s rewritten although none of its endpoints changed", s.Name)
			}
		}
	}
	env.CreatePod(ns, ctrltest.PodSpec{Name: "p25", Labels: sel, IP: "10.2.0.26", Ready: true, Node: "n2"})
	env.Eventually("26 endpoints in the same 3 slices", func() error {
		after := slicesOf(env, "big")
		n := 0
		for _, s := range after {
			n += len(s.Endpoints)
		}
		if n != 26 || len(after) != 3 {
			return fmt.Errorf("%d endpoints in %d slices", n, len(after))
		}
		return nil
	})
}

// TestDualStackAndHeadless: a headless Service without ip families gets
// IPv4 and IPv6 slices; hostnames and the headless label.
func TestDualStackAndHeadless(t *testing.T) {
	env := start(t, Options{}, false)
	ctx := context.Background()
	sel := map[string]string{"app": "db"}
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{Selector: sel, ClusterIP: corev1.ClusterIPNone}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := env.Services(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env.CreatePod(ns, ctrltest.PodSpec{Name: "db-0", Labels: sel, IP: "10.3.0.1", Ready: true, Node: "n1", Hostname: "db-0", Subdomain: "db"})
	want := []string{"IPv4 [] 10.3.0.1/db-0/n1/zone-a/db-0/TTF"}
	if len(svc.Spec.IPFamilies) == 0 {
		want = append(want, "IPv6 [] placeholder")
	}
	got := waitSlices(env, "db", strings.Join(want, "\n"))
	for _, s := range got {
		if v, ok := s.Labels[corev1.IsHeadlessService]; !ok || v != "" {
			t.Fatalf("labels %v", s.Labels)
		}
	}
}

func sliceNames(list []discoveryv1.EndpointSlice) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].Name
	}
	return out
}
