package printers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkPodCells measures rendering one pod row (`kubectl get pods`
// renders one per pod).
func BenchmarkPodCells(b *testing.B) {
	tc := ForClock("", "Pod", clock)
	p := pod(corev1.PodRunning,
		corev1.ContainerStatus{Name: "a", Ready: true, State: running, RestartCount: 1},
		corev1.ContainerStatus{Name: "b", State: waiting("CrashLoopBackOff")})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tc.Cells(p); err != nil {
			b.Fatal(err)
		}
	}
}
