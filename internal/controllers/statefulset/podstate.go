package statefulset

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// Pod states as the StatefulSet controller reads them. A pod not yet
// created is one newPod built: its phase is empty.

func isCreated(p *corev1.Pod) bool     { return p.Status.Phase != "" }
func isPending(p *corev1.Pod) bool     { return p.Status.Phase == corev1.PodPending }
func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutil.IsPodReady(p)
}

func isAvailable(p *corev1.Pod, minReady int32, now time.Time) bool {
	return podutil.IsPodAvailable(p, minReady, metav1.NewTime(now))
}

// isUnavailable: not available, or terminating.
func isUnavailable(p *corev1.Pod, minReady int32, now time.Time) bool {
	return !isAvailable(p, minReady, now) || isTerminating(p)
}
