package discoveryv1

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestEndpointSliceDefaultsAndUpdate(t *testing.T) {
	r := lookup(t, "endpointslices")
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: "ns", ResourceVersion: "4"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Port: new(int32(80))}},
	}
	expectValid(t, create(r, s))
	if p := s.Ports[0]; p.Name == nil || *p.Name != "" || p.Protocol == nil || *p.Protocol != "TCP" {
		t.Errorf("port defaults: name %v protocol %v", p.Name, p.Protocol)
	}
	// A slice stored with the deprecated address type IP may be updated.
	old := s.DeepCopy()
	old.AddressType = "IP"
	upd := old.DeepCopy()
	upd.Endpoints[0].Addresses = []string{"10.0.0.2"}
	expectValid(t, update(r, upd, old))
	// A changed address type hides every other error of the body.
	upd = s.DeepCopy()
	upd.AddressType = discoveryv1.AddressTypeIPv6
	expectErrors(t, update(r, upd, s), "addressType:FieldValueInvalid")
	expectFields(t, r, s, fields.Set{"metadata.name": "web-1", "metadata.namespace": "ns"})
}
