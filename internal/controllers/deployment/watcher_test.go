package deployment

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// podWatcher is an independent observer of a Deployment's pods: it lists
// them, then follows the server's watch event by event, and after every
// event hands the whole current set to check, which returns a violation
// or nil. It never reads the controllers' caches.
type podWatcher struct {
	h     *harness
	check func(pods map[string]*corev1.Pod) error
	w     watch.Interface
	done  chan struct{}

	mu sync.Mutex
	// pods is the current state by name; events counts the watch events
	// applied; violations are check's complaints. Guarded by mu.
	pods       map[string]*corev1.Pod
	events     int
	violations []string
}

func (h *harness) watchPods(app string, check func(map[string]*corev1.Pod) error) *podWatcher {
	h.t.Helper()
	ctx := context.Background()
	sel := "app=" + app
	list, err := h.pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		h.t.Fatal(err)
	}
	pw := &podWatcher{h: h, check: check, pods: map[string]*corev1.Pod{}, done: make(chan struct{})}
	for i := range list.Items {
		pw.pods[list.Items[i].Name] = &list.Items[i]
	}
	pw.apply()
	pw.w, err = h.pods.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		h.t.Fatal(err)
	}
	go pw.loop()
	return pw
}

func (pw *podWatcher) loop() {
	defer close(pw.done)
	for ev := range pw.w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		pw.mu.Lock()
		switch {
		case !ok:
			pw.violations = append(pw.violations, fmt.Sprintf("watch error: %v", ev.Object))
		case ev.Type == watch.Deleted:
			delete(pw.pods, pod.Name)
		case ev.Type == watch.Added || ev.Type == watch.Modified:
			pw.pods[pod.Name] = pod
		}
		pw.events++
		pw.mu.Unlock()
		pw.apply()
	}
}

func (pw *podWatcher) apply() {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if err := pw.check(pw.pods); err != nil {
		pw.violations = append(pw.violations, err.Error())
	}
}

// finish stops the watch and fails the test on any violation; it returns
// the number of events seen.
func (pw *podWatcher) finish() int {
	pw.h.t.Helper()
	pw.w.Stop()
	<-pw.done
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for i, v := range pw.violations {
		if i == 10 {
			pw.h.t.Errorf("... and %d more", len(pw.violations)-10)
			break
		}
		pw.h.t.Error(v)
	}
	return pw.events
}

// counts returns the pods that are not terminating (no deletionTimestamp,
// not Succeeded/Failed) and, of those, the Ready ones.
func counts(pods map[string]*corev1.Pod) (active, available int) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		active++
		if isReady(p) {
			available++
		}
	}
	return active, available
}
