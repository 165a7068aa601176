package autoservice_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/examples/autoservice"
)

// TestDesiredService checks the Service derived from a Deployment without
// a server: ports (kept names and protocols, TCP by default, duplicates
// dropped, generated names when several are unnamed, 80 when none), the
// selector (a copy), the label; and the errors for Deployments that cannot
// have one.
func TestDesiredService(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	for _, tc := range []struct {
		name  string
		ports [][]corev1.ContainerPort
		want  []corev1.ServicePort
	}{
		{"no ports", nil, []corev1.ServicePort{port("", tcp, 80)}},
		{"one unnamed", [][]corev1.ContainerPort{{{ContainerPort: 8080}}}, []corev1.ServicePort{port("", tcp, 8080)}},
		{"one named udp", [][]corev1.ContainerPort{{{Name: "dns", ContainerPort: 53, Protocol: udp}}},
			[]corev1.ServicePort{port("dns", udp, 53)}},
		{"across containers", [][]corev1.ContainerPort{
			{{Name: "http", ContainerPort: 8080}, {ContainerPort: 53, Protocol: udp}},
			{{ContainerPort: 53}, {ContainerPort: 8080, Protocol: tcp}}},
			[]corev1.ServicePort{port("http", tcp, 8080), port("udp-53", udp, 53), port("tcp-53", tcp, 53)}},
		{"duplicate and clashing names", [][]corev1.ContainerPort{
			{{Name: "tcp-2", ContainerPort: 1}, {Name: "tcp-2", ContainerPort: 2}, {ContainerPort: 3}}},
			[]corev1.ServicePort{port("tcp-2", tcp, 1), port("tcp-2-2", tcp, 2), port("tcp-3", tcp, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment("web", "true", tc.ports...)
			svc, err := autoservice.DesiredService(d)
			if err != nil {
				t.Fatal(err)
			}
			if svc.Name != "web-service" || svc.Namespace != "default" || svc.Spec.Type != corev1.ServiceTypeClusterIP ||
				svc.Labels[autoservice.ManagedByLabel] != autoservice.ManagedBy {
				t.Fatalf("service %s/%s type %s labels %v", svc.Namespace, svc.Name, svc.Spec.Type, svc.Labels)
			}
			if !reflect.DeepEqual(svc.Spec.Ports, tc.want) {
				t.Fatalf("ports %+v, want %+v", svc.Spec.Ports, tc.want)
			}
			svc.Spec.Selector["app"] = "changed"
			if d.Spec.Selector.MatchLabels["app"] != "web" {
				t.Fatal("the selector shares its map with the Deployment")
			}
		})
	}

	for _, tc := range []struct{ name, deployment, want string }{
		{"dotted name", "web.v1", `service name "web.v1-service"`},
		{"leading digit", "1web", `service name "1web-service"`},
		{"too long", strings.Repeat("a", 60), "must be no more than 63"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := autoservice.DesiredService(deployment(tc.deployment, "true"))
			if !errors.Is(err, autoservice.ErrInvalidDeployment) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInvalidDeployment with %q", err, tc.want)
			}
		})
	}
	d := deployment("web", "true")
	d.Spec.Selector.MatchLabels = nil
	if _, err := autoservice.DesiredService(d); !errors.Is(err, autoservice.ErrInvalidDeployment) || !strings.Contains(err.Error(), "matchLabels") {
		t.Fatalf("selector without matchLabels: %v", err)
	}
}
