package endpointslicemirroring_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpointslicemirroring"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

func mirrored(env *ctrltest.Env, name string) []discoveryv1.EndpointSlice {
	env.T.Helper()
	c := rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](env.Client,
		discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), true).Namespace(ns)
	list, err := c.List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name +
		"," + discoveryv1.LabelManagedBy + "=" + endpointslicemirroring.ManagedBy})
	if err != nil {
		env.T.Fatal(err)
	}
	return list.Items
}

func describe(list []discoveryv1.EndpointSlice) string {
	var out []string
	for _, s := range list {
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d/%s", *p.Name, *p.Port, *p.Protocol))
		}
		for _, e := range s.Endpoints {
			host := ""
			if e.Hostname != nil {
				host = *e.Hostname
			}
			out = append(out, fmt.Sprintf("%s %v %s ready=%v host=%s", s.AddressType, ports, e.Addresses[0], *e.Conditions.Ready, host))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestMirroring: a selectorless Service's Endpoints are mirrored (types,
// ports, readiness, labels, annotations, owner); changes follow; the
// skip-mirror label, a selector, or deleting the Endpoints removes them.
func TestMirroring(t *testing.T) {
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		return endpointslicemirroring.Add(e.Mgr, endpointslicemirroring.Options{})
	})
	ctx := context.Background()
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	https := []corev1.EndpointPort{{Name: "https", Port: 8443, Protocol: corev1.ProtocolTCP}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "ext", Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "x", corev1.EndpointsLastChangeTriggerTime: "2020-01-01T00:00:00Z"}},
		Subsets: []corev1.EndpointSubset{
			{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1", Hostname: "one"}, {IP: "2001:db8::1"}},
				NotReadyAddresses: []corev1.EndpointAddress{{IP: "192.0.2.2"}}, Ports: https},
			{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.3"}}, Ports: []corev1.EndpointPort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}},
		},
	}
	created, err := env.Endpoints(ns).Create(ctx, ep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"IPv4 [dns:53/UDP] 192.0.2.3 ready=true host=",
		"IPv4 [https:8443/TCP] 192.0.2.1 ready=true host=one",
		"IPv4 [https:8443/TCP] 192.0.2.2 ready=false host=",
		"IPv6 [https:8443/TCP] 2001:db8::1 ready=true host=",
	}, "\n")
	env.Eventually("mirrored", func() error {
		got := mirrored(env, "ext")
		if d := describe(got); d != want {
			return fmt.Errorf("got\n%s\nwant\n%s", d, want)
		}
		for _, s := range got {
			ref := metav1.GetControllerOf(&s)
			if ref == nil || ref.Kind != "Endpoints" || ref.UID != created.UID || s.Labels["team"] != "a" ||
				s.Annotations["note"] != "x" || s.Annotations[corev1.EndpointsLastChangeTriggerTime] != "" || !strings.HasPrefix(s.Name, "ext-") {
				return fmt.Errorf("slice metadata %+v", s.ObjectMeta)
			}
		}
		if len(got) != 3 {
			return fmt.Errorf("%d slices, want 3", len(got))
		}
		return nil
	})

	// An edit follows.
	cur, err := env.Endpoints(ns).Get(ctx, "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Subsets = cur.Subsets[:1]
	cur.Subsets[0].NotReadyAddresses = nil
	if _, err := env.Endpoints(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("edit mirrored", func() error {
		w := "IPv4 [https:8443/TCP] 192.0.2.1 ready=true host=one\nIPv6 [https:8443/TCP] 2001:db8::1 ready=true host="
		if d := describe(mirrored(env, "ext")); d != w {
			return fmt.Errorf("got\n%s", d)
		}
		if n := len(mirrored(env, "ext")); n != 2 {
			return fmt.Errorf("%d slices", n)
		}
		return nil
	})

	// skip-mirror: removed.
	cur, err = env.Endpoints(ns).Get(ctx, "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels[discoveryv1.LabelSkipMirror] = "true"
	if _, err := env.Endpoints(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("skip-mirror removes", func() error {
		if n := len(mirrored(env, "ext")); n != 0 {
			return fmt.Errorf("%d slices", n)
		}
		return nil
	})

	// A Service with a selector is not mirrored.
	if _, err := env.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "sel"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "sel"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.9"}},
			Ports: []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(mirrored(env, "sel")); n != 0 {
		t.Fatalf("%d slices mirrored for a service with a selector", n)
	}
}
