package objects

import (
	"crypto/rand"
	"math/big"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// nameSuffixAlphabet and its length are those Kubernetes uses for
// generateName, so generated names look familiar.
const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	const maxNameLen, suffixLen = 63, 5
	if len(base) > maxNameLen-suffixLen {
		base = base[:maxNameLen-suffixLen]
	}
	b := []byte(base)
	for range suffixLen {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(nameSuffixAlphabet))))
		if err != nil {
			panic(err) // crypto/rand never fails on Linux
		}
		b = append(b, nameSuffixAlphabet[n.Int64()])
	}
	return string(b)
}

// fillCreateMeta sets the system fields of a new object.
func (s *Store) fillCreateMeta(m metav1.Object) {
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(s.clock.Now().Truncate(1e9)))
	if s.res.NoGeneration {
		m.SetGeneration(0)
	} else {
		m.SetGeneration(1)
	}
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// carryUpdateMeta copies from old the system fields a client cannot change
// through an update.
func carryUpdateMeta(m, old metav1.Object) {
	if m.GetUID() == "" {
		m.SetUID(old.GetUID())
	}
	m.SetCreationTimestamp(old.GetCreationTimestamp())
	m.SetGeneration(old.GetGeneration())
	m.SetDeletionTimestamp(old.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	m.SetSelfLink("")
	if m.GetGenerateName() == "" {
		m.SetGenerateName(old.GetGenerateName())
	}
}

// specChanged reports whether anything besides metadata and status differs
// between two objects of the same Go struct type (of their stored forms,
// for views): that is what bumps metadata.generation.
func (s *Store) specChanged(obj, old runtime.Object) bool {
	if v := s.res.View; v != nil {
		// A view may not show all of the spec (autoscaling/v1 keeps
		// autoscaling/v2's metrics in annotations): compare stored forms.
		a, err1 := v.ToStorage(obj)
		b, err2 := v.ToStorage(old)
		if err1 == nil && err2 == nil {
			obj, old = a, b
		}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if o, ok := old.(*unstructured.Unstructured); ok {
			return unstructuredSpecChanged(u.Object, o.Object, s.res.Status != nil)
		}
		return true
	}
	a, b := reflect.ValueOf(obj), reflect.ValueOf(old)
	if a.Kind() != reflect.Pointer || b.Kind() != reflect.Pointer || a.Type() != b.Type() {
		return true
	}
	a, b = a.Elem(), b.Elem()
	if a.Kind() != reflect.Struct {
		return !equality.Semantic.DeepEqual(obj, old)
	}
	t := a.Type()
	for i := range t.NumField() {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !equality.Semantic.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return true
		}
	}
	return false
}

// unstructuredSpecChanged compares two custom resources on everything but
// apiVersion, kind and metadata, and also status when the kind has a
// status subresource, as Kubernetes' custom-resource strategy decides
// generation: without the subresource, status is a client field like any
// other and a change to it moves the generation.
func unstructuredSpecChanged(a, b map[string]any, statusSubresource bool) bool {
	skip := func(k string) bool {
		return k == "apiVersion" || k == "kind" || k == "metadata" || (statusSubresource && k == "status")
	}
	n := 0
	for k, va := range a {
		if skip(k) {
			continue
		}
		n++
		vb, ok := b[k]
		if !ok || !equality.Semantic.DeepEqual(va, vb) {
			return true
		}
	}
	for k := range b {
		if !skip(k) {
			n--
		}
	}
	return n != 0
}
