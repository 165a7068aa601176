package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkPodCreate measures the create pipeline (Default,
// PrepareForCreate, Validate) of a typical one-container pod.
func BenchmarkPodCreate(b *testing.B) {
	r := lookup(b, "pods")
	base := newPod()
	b.ReportAllocs()
	for b.Loop() {
		p := base.DeepCopy()
		if errs := create(r, p); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkPodAttrs measures field-set extraction, run by watch filtering
// on every event.
func BenchmarkPodAttrs(b *testing.B) {
	r := lookup(b, "pods")
	p := newPod()
	p.Status.Phase = corev1.PodRunning
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Attrs(p); err != nil {
			b.Fatal(err)
		}
	}
}
