package dra

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest"
)

func TestSelectorCompiler(t *testing.T) {
	c := &selectorCompiler{}
	p := field.NewPath("x")
	for expr, ok := range map[string]bool{
		"device.driver == 'gpu.example.com'":                                        true,
		"device.attributes['gpu.example.com'].model":                                true, // an attribute: its type is known at run time
		"cel.bind(a, device.attributes['gpu.example.com'], a.model == 'x')":         true,
		"device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) >= 0": true,
		"device.allowMultipleAllocations":                                           true,
		"device.driver":                                                             false, // a string
		"device.nope":                                                               false,
		"request.name == 'x'":                                                       false,
		"device.attributes['gpu.example.com'].model == 'a' && device.driver.startsWith('gpu')": true,
	} {
		if errs := c.validate(p, expr); (len(errs) == 0) != ok {
			t.Errorf("%s: %v", expr, errs)
		}
	}
	long := make([]byte, resourcev1.CELSelectorExpressionMaxLength+1)
	for i := range long {
		long[i] = ' '
	}
	registrytest.ExpectErrors(t, c.validate(p, string(long)), "x:FieldValueTooLong")
}

func TestClaimDefaultsAndDrops(t *testing.T) {
	r := registrytest.Find(t, Resources(), "resourceclaims")
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
	c.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: "gpu", DerivedAttributes: []resourcev1.DeviceDerivedAttribute{{}}}}}
	c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
	registrytest.ExpectValid(t, registrytest.Create(r, c))
	e := c.Spec.Devices.Requests[0].Exactly
	if e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 || e.DerivedAttributes != nil || c.Status.ReservedFor != nil {
		t.Errorf("after create: %+v, status %+v", e, c.Status)
	}
	registrytest.ExpectFields(t, r, c, map[string]string{"metadata.name": "c", "metadata.namespace": "default"})
}

func TestSliceDropsAlphaFields(t *testing.T) {
	r := registrytest.Find(t, Resources(), "resourceslices")
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}, AllNodes: new(true),
		Devices: []resourcev1.Device{{Name: "a", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"list": {IntValues: []int64{1}}, "one": {IntValue: new(int64(1))}}}},
	}}
	registrytest.ExpectErrors(t, registrytest.Create(r, s), "spec.devices[0].attributes[list]:FieldValueInvalid")
	if a := s.Spec.Devices[0].Attributes["list"]; a.IntValues != nil || s.Generation != 0 {
		t.Errorf("list attribute kept: %+v", a)
	}
	// A stored slice that has them keeps them.
	old := s.DeepCopy()
	old.Spec.Devices[0].Attributes["list"] = resourcev1.DeviceAttribute{IntValues: []int64{1}}
	upd := old.DeepCopy()
	r.Strategy.PrepareForUpdate(upd, old)
	if upd.Spec.Devices[0].Attributes["list"].IntValues == nil {
		t.Errorf("update dropped a stored list attribute")
	}
}
