package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestRuntimeClass(t *testing.T) {
	r := lookup(t, "runtimeclasses")
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor", ResourceVersion: "2"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": resource.MustParse("250m"), "example.com/gpu": resource.MustParse("1")}}}
	expectValid(t, create(r, rc.DeepCopy()))
	for name, c := range map[string]struct {
		mutate func(*nodev1.RuntimeClass)
		want   []string
	}{
		"no handler":        {func(rc *nodev1.RuntimeClass) { rc.Handler = "" }, []string{"handler:FieldValueRequired"}},
		"hugepages ok":      {func(rc *nodev1.RuntimeClass) { rc.Overhead.PodFixed["hugepages-2Mi"] = resource.MustParse("2Mi") }, nil},
		"pods not standard": {func(rc *nodev1.RuntimeClass) { rc.Overhead.PodFixed["pods"] = resource.MustParse("1") }, []string{"overhead.limits[pods]:FieldValueInvalid"}},
		"kubernetes.io ok":  {func(rc *nodev1.RuntimeClass) { rc.Overhead.PodFixed["kubernetes.io/x"] = resource.MustParse("1") }, nil},
		"requests. prefix":  {func(rc *nodev1.RuntimeClass) { rc.Overhead.PodFixed["requests.x/y"] = resource.MustParse("1") }, []string{"overhead.limits[requests.x/y]:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			c2 := rc.DeepCopy()
			c.mutate(c2)
			expectErrors(t, create(r, c2), c.want...)
		})
	}
	upd := rc.DeepCopy()
	upd.Handler = "kata"
	expectErrors(t, update(r, upd, rc), "handler:FieldValueInvalid")
	expectFields(t, r, rc, fields.Set{"metadata.name": "gvisor", "metadata.namespace": ""})
}
