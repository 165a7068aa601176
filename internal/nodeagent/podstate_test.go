package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod that ended keeps its address in status after the address went
// back to the pool: a status write retried after the release (a conflict,
// say) must still carry a valid podIP, or the server rejects it with 422.
func TestTerminalPodKeepsIPAfterRelease(t *testing.T) {
	ip, err := newIPAM(podCIDR(0))
	if err != nil {
		t.Fatal(err)
	}
	n := &node{name: "node-0", ip: "127.0.0.1", ipam: ip}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ps := newPodState(pod, n, now, time.Hour)
	ps.admit(pod, now)
	ps.startSandbox(now)
	rc := &runtimeCtx{now: now, backoff: time.Second, env: func(*corev1.Container) string { return "" }}
	ps.advance(rc)
	if ps.ip, err = ip.allocate(ps.uid); err != nil {
		t.Fatal(err)
	}
	ps.pending["app"] = 3
	ps.advance(rc)
	ps.releaseIP()
	for attempt := range 2 { // the first write and its retry
		st := ps.status(pod, now)
		if st.Phase != corev1.PodFailed || st.PodIP != "10.128.0.2" ||
			len(st.PodIPs) != 1 || st.PodIPs[0].IP != "10.128.0.2" {
			t.Fatalf("attempt %d: phase %s podIP %q podIPs %v", attempt, st.Phase, st.PodIP, st.PodIPs)
		}
	}
	if got, err := ip.allocate("u2"); err != nil || got != "10.128.0.3" {
		// round robin: the freed .2 is not reused at once, but it is free
		t.Fatalf("allocate after release = %q, %v", got, err)
	}
	if _, held := ip.byPod["u1"]; held {
		t.Error("released pod still holds its address in the pool")
	}
}
