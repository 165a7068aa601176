package cache

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestMutationDetectorCatchesInPlaceChange(t *testing.T) {
	s := NewObjectIndexer(podIndexers(), WithMutationDetector(JSONFingerprint[*corev1.Pod]))
	if !s.MutationDetectionEnabled() {
		t.Fatal("detector not enabled")
	}
	for _, p := range []*corev1.Pod{newPod("a", "p1"), newPod("a", "p2"), newPod("b", "p3")} {
		if err := s.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CheckMutations(); err != nil {
		t.Fatalf("untouched store: %v", err)
	}
	// A careless reader modifies the shared object.
	got, _, _ := s.GetByKey("a/p2")
	got.Labels = map[string]string{"oops": "1"}
	err := s.CheckMutations()
	var me *MutationError
	if !errors.As(err, &me) || !slices.Equal(me.Keys, []string{"a/p2"}) {
		t.Fatalf("CheckMutations = %v, want a MutationError for a/p2", err)
	}
	// Storing a fresh object under that key re-baselines it.
	if err := s.Update(newPod("a", "p2")); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckMutations(); err != nil {
		t.Fatalf("after update: %v", err)
	}
}

func TestMutationDetectorFromEnv(t *testing.T) {
	t.Setenv(MutationDetectorEnv, "true")
	if !NewObjectIndexer[*corev1.Pod](nil).MutationDetectionEnabled() {
		t.Fatal("env var did not enable detection")
	}
	if NewObjectIndexer[*corev1.Pod](nil, WithMutationDetector[*corev1.Pod](nil)).MutationDetectionEnabled() {
		t.Fatal("explicit nil option did not override the env var")
	}
	t.Setenv(MutationDetectorEnv, "")
	s := NewObjectIndexer[*corev1.Pod](nil)
	if s.MutationDetectionEnabled() || s.CheckMutations() != nil {
		t.Fatal("detection on without env var or option")
	}
}

func TestRunMutationChecksReportsOnTick(t *testing.T) {
	s := NewObjectIndexer(nil, WithMutationDetector(JSONFingerprint[*corev1.Pod]))
	p := newPod("a", "p1")
	if err := s.Add(p); err != nil {
		t.Fatal(err)
	}
	p.Spec.NodeName = "changed"
	tick := make(chan time.Time)
	reports := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunMutationChecks(ctx, tick, func(err error) { reports <- err })
	}()
	tick <- time.Time{}
	if err := <-reports; err == nil {
		t.Fatal("reported nil")
	}
	cancel()
	<-done
}
