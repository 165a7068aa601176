package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newEndpoints() *corev1.Endpoints {
	return &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "4"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}},
			Ports:     []corev1.EndpointPort{{Port: 80}},
		}},
	}
}

func TestEndpoints(t *testing.T) {
	r := lookup(t, "endpoints")
	e := newEndpoints()
	expectValid(t, create(r, e))
	if e.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("port protocol not defaulted: %+v", e.Subsets[0].Ports[0])
	}
	for name, c := range map[string]struct {
		mutate func(*corev1.Endpoints)
		want   []string
	}{
		"no addresses": {func(e *corev1.Endpoints) { e.Subsets[0].Addresses = nil }, []string{"subsets[0]:FieldValueRequired"}},
		"not an IP": {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "x" },
			[]string{"subsets[0].addresses[0].ip:FieldValueInvalid", "subsets[0].addresses[0].ip:FieldValueInvalid"}},
		"leading zero":  {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "010.0.0.1" }, []string{"subsets[0].addresses[0].ip:FieldValueInvalid"}},
		"loopback":      {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "127.0.0.2" }, []string{"subsets[0].addresses[0].ip:FieldValueInvalid"}},
		"link-local v6": {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "fe80::1" }, []string{"subsets[0].addresses[0].ip:FieldValueInvalid"}},
		"hostname":      {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].Hostname = "A_B" }, []string{"subsets[0].addresses[0].hostname:FieldValueInvalid"}},
		"node name": {func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].NodeName = new("Node_1") },
			[]string{"subsets[0].addresses[0].nodeName:FieldValueInvalid"}},
		"unnamed ports": {func(e *corev1.Endpoints) {
			e.Subsets[0].Ports = append(e.Subsets[0].Ports, corev1.EndpointPort{Name: "b", Port: 81})
		},
			[]string{"subsets[0].ports[0].name:FieldValueRequired"}},
		"port zero": {func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Port = 0 }, []string{"subsets[0].ports[0].port:FieldValueInvalid"}},
		"protocol":  {func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Protocol = "ICMP" }, []string{"subsets[0].ports[0].protocol:FieldValueNotSupported"}},
		"app protocol": {func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].AppProtocol = new("a b") },
			[]string{"subsets[0].ports[0].appProtocol:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEndpoints()
			c.mutate(e)
			expectErrors(t, create(r, e), c.want...)
		})
	}

	// An update that leaves invalid subsets as they were is accepted.
	old := newEndpoints()
	old.Subsets[0].Addresses[0].IP = "127.0.0.1"
	r.Strategy.Default(old)
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	expectValid(t, update(r, upd, old))
	upd.Subsets[0].Ports[0].Port = 81
	expectErrors(t, update(r, upd, old), "subsets[0].addresses[0].ip:FieldValueInvalid")

	if _, ok := r.Strategy.(registry.CreateOnUpdateStrategy); !ok || r.Deprecation == "" {
		t.Errorf("endpoints: create on update %v, deprecation %q", ok, r.Deprecation)
	}
}
