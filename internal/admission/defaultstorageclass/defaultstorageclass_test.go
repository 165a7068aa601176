package defaultstorageclass

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// classEnv serves storage classes from a slice: storage.k8s.io is not
// served by this package's server, so the admission of claims is tested
// against this stand-in (nil classes: the group is not served).
type classEnv struct {
	registry.Env // the rest of the server is not used
	classes      []runtime.Object
}

func (e classEnv) Objects(gvr schema.GroupVersionResource) registry.Objects {
	if gvr != storageClassesGVR || e.classes == nil {
		return nil
	}
	return classObjects(e)
}
func (classEnv) Storage() storage.Store           { return nil }
func (classEnv) Clock() clock.PassiveClock        { return clock.RealClock{} }
func (classEnv) NodeTransport() http.RoundTripper { return nil }

type classObjects classEnv

func (o classObjects) List(context.Context, string, labels.Selector, fields.Selector) ([]runtime.Object, error) {
	return o.classes, nil
}
func (classObjects) Get(context.Context, string, string) (runtime.Object, error) { return nil, nil }
func (classObjects) Create(context.Context, string, runtime.Object, bool) (runtime.Object, error) {
	return nil, nil
}
func (classObjects) Update(context.Context, string, string, func(runtime.Object) (runtime.Object, error), bool) (runtime.Object, error) {
	return nil, nil
}
func (classObjects) Mutate(context.Context, string, string, func(runtime.Object) error, bool) (runtime.Object, error) {
	return nil, nil
}
func (classObjects) Delete(context.Context, string, string, *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return nil, false, nil
}

var pvcsResource = &registry.Resource{Version: "v1", Resource: "persistentvolumeclaims", Namespaced: true}

func newPVC() *corev1.PersistentVolumeClaim {
	fast := "fast"
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &fast},
	}
}

func class(name string, age time.Duration, isDefault string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.NewTime(time.Unix(1_000_000, 0).Add(-age))}}
	if isDefault != "" {
		sc.Annotations = map[string]string{isDefault: "true"}
	}
	return sc
}

// TestDefaultStorageClass checks a claim created without a class gets the
// newest default class (by name on a tie), and that a class named by the
// field or the beta annotation, an update, or no default class leaves it.
func TestDefaultStorageClass(t *testing.T) {
	classes := []runtime.Object{
		class("plain", 0, ""),
		class("old-default", time.Hour, DefaultClassAnnotation),
		class("b-default", time.Minute, BetaDefaultClassAnnotation),
		class("a-default", time.Minute, DefaultClassAnnotation),
	}
	admit := func(env registry.Env, op registry.Operation, c *corev1.PersistentVolumeClaim) *string {
		t.Helper()
		a := &registry.Attributes{Operation: op, Resource: pvcsResource, Object: c, Old: newPVC()}
		if _, err := New().Admit(context.Background(), env, a); err != nil {
			t.Fatal(err)
		}
		return c.Spec.StorageClassName
	}
	unset := func() *corev1.PersistentVolumeClaim {
		c := newPVC()
		c.Spec.StorageClassName = nil
		return c
	}
	if got := admit(classEnv{classes: classes}, registry.Create, unset()); got == nil || *got != "a-default" {
		t.Errorf("default class %v, want a-default", got)
	}
	if got := admit(classEnv{classes: classes}, registry.Create, newPVC()); *got != "fast" {
		t.Errorf("named class replaced by %q", *got)
	}
	annotated := unset()
	annotated.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "x"}
	if got := admit(classEnv{classes: classes}, registry.Create, annotated); got != nil {
		t.Errorf("class set despite the beta annotation: %q", *got)
	}
	if got := admit(classEnv{classes: classes}, registry.Update, unset()); got != nil {
		t.Errorf("class set on update: %q", *got)
	}
	if got := admit(classEnv{classes: []runtime.Object{class("plain", 0, "")}}, registry.Create, unset()); got != nil {
		t.Errorf("class set without a default: %q", *got)
	}
	if got := admit(classEnv{}, registry.Create, unset()); got != nil {
		t.Errorf("class set without storage classes served: %q", *got)
	}
}
