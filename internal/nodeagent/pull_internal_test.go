package nodeagent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pullPod is a started pod of one container of image on a node that
// cannot pull "*:404".
func pullPod(t *testing.T, image string, policy corev1.PullPolicy, now time.Time) (*podState, *runtimeCtx) {
	t.Helper()
	images, err := newImagePolicy([]string{"*:404"})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: policy}}}}
	ps := newPodState(pod, &node{name: "node-0"}, now, 0)
	ps.record, ps.pod = true, pod
	ps.admit(pod, now)
	ps.startSandbox(now)
	return ps, &runtimeCtx{now: now, backoff: 10 * time.Second, images: images,
		env: func(*corev1.Container) string { return "" }}
}

func eventsOf(ps *podState) []string {
	var out []string
	for _, ev := range ps.takeEvents() {
		out = append(out, ev.reason+": "+ev.message)
	}
	return out
}

// A container whose image the node cannot pull never starts: each pull
// fails with the kubelet's events, the status turns from ErrImagePull to
// ImagePullBackOff, and the pull is tried again when the back-off (10s
// doubling) ends, also when the agent looks late.
func TestUnpullableImageBacksOff(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ps, rc := pullPod(t, "web:404", corev1.PullIfNotPresent, t0)
	pulled := []string{`Pulling: Pulling image "web:404"`,
		`Failed: Failed to pull image "web:404": rpc error: code = NotFound desc = failed to pull and unpack image "web:404": ` +
			`not found (setpoint: the simulated nodes cannot pull images matching "*:404")`,
		"Failed: Error: ErrImagePull"}
	backOff := []string{`BackOff: Back-off pulling image "web:404"`, "Failed: Error: ImagePullBackOff"}

	if next := ps.advance(rc); !next.Equal(t0.Add(time.Second)) {
		t.Errorf("next after the first pull = %v", next)
	}
	if got := eventsOf(ps); !slices.Equal(got, pulled) {
		t.Errorf("first pull: events\n%q\nwant\n%q", got, pulled)
	}
	st := ps.status(ps.pod, t0)
	w := st.ContainerStatuses[0].State.Waiting
	if st.Phase != corev1.PodPending || w == nil || w.Reason != "ErrImagePull" || w.Message != ps.containers[0].pull.err {
		t.Fatalf("at the failure: phase %s waiting %+v", st.Phase, w)
	}

	rc.now = t0.Add(time.Second)
	if next := ps.advance(rc); !next.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("next in the back-off = %v", next)
	}
	if got := eventsOf(ps); !slices.Equal(got, backOff) {
		t.Errorf("back-off: events %q, want %q", got, backOff)
	}
	w = ps.status(ps.pod, rc.now).ContainerStatuses[0].State.Waiting
	wantMsg := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", "web:404", ps.containers[0].pull.err)
	if w == nil || w.Reason != "ImagePullBackOff" || w.Message != wantMsg {
		t.Fatalf("in the back-off: waiting %+v", w)
	}

	// The agent looks again 35s after the first failure: the retry at 10s
	// failed, its 20s back-off ended at 30s and that retry failed too.
	rc.now = t0.Add(35 * time.Second)
	next := ps.advance(rc)
	if got := eventsOf(ps); len(got) != 2*(len(pulled)+len(backOff)) {
		t.Errorf("two retries: events %q", got)
	}
	p := ps.containers[0].pull
	if !p.failedAt.Equal(t0.Add(30*time.Second)) || p.backoff != 40*time.Second || !next.Equal(t0.Add(70*time.Second)) {
		t.Errorf("after two retries: failed at %v, back-off %v, next %v", p.failedAt, p.backoff, next)
	}
	if st := ps.status(ps.pod, rc.now); st.Phase != corev1.PodPending || st.ContainerStatuses[0].Ready ||
		st.ContainerStatuses[0].ContainerID != "" {
		t.Errorf("status %+v", st.ContainerStatuses[0])
	}
}

// With imagePullPolicy Never the image is not pulled at all: the
// container waits in ErrImageNeverPull, with one pair of events and no
// retry; an image the node can pull starts as always.
func TestUnpullableImageNeverPull(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ps, rc := pullPod(t, "web:404", corev1.PullNever, t0)
	if next := ps.advance(rc); !next.IsZero() {
		t.Errorf("next = %v, want none", next)
	}
	msg := `Container image "web:404" is not present with pull policy of Never`
	if got, want := eventsOf(ps), []string{"ErrImageNeverPull: " + msg, "Failed: Error: ErrImageNeverPull"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	rc.now = t0.Add(time.Hour)
	ps.advance(rc)
	if got := eventsOf(ps); len(got) != 0 {
		t.Errorf("later events %q", got)
	}
	if w := ps.status(ps.pod, rc.now).ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImageNeverPull" || w.Message != msg {
		t.Errorf("waiting %+v", w)
	}

	ok, rc := pullPod(t, "web:1", corev1.PullIfNotPresent, t0)
	ok.advance(rc)
	if st := ok.status(ok.pod, t0); st.ContainerStatuses[0].State.Running == nil {
		t.Errorf("a pullable image: %+v", st.ContainerStatuses[0].State)
	}
}

// An agent that restarts takes a failed pull over from the status: the
// container keeps waiting in ImagePullBackOff, the back-off starts again
// and nothing is recorded until its end.
func TestUnpullableImageAdopted(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ps, rc := pullPod(t, "web:404", corev1.PullIfNotPresent, t0)
	rc.now = t0.Add(5 * time.Second)
	ps.advance(rc)
	st := ps.status(ps.pod, rc.now)

	later := t0.Add(time.Hour)
	again, rc2 := pullPod(t, "web:404", corev1.PullIfNotPresent, later)
	again.pod.Status = st
	again.adopt(again.pod, later, 10*time.Second)
	rc2.now = later
	if next := again.advance(rc2); !next.Equal(later.Add(10 * time.Second)) {
		t.Errorf("next after adoption = %v", next)
	}
	if got := eventsOf(again); len(got) != 0 {
		t.Errorf("events at adoption %q", got)
	}
	w := again.status(again.pod, later).ContainerStatuses[0].State.Waiting
	if w == nil || *w != *st.ContainerStatuses[0].State.Waiting {
		t.Errorf("adopted waiting %+v, was %+v", w, st.ContainerStatuses[0].State.Waiting)
	}
}

func TestImagePolicyPatterns(t *testing.T) {
	if _, err := newImagePolicy([]string{"[x"}); err == nil {
		t.Error("a malformed pattern was accepted")
	}
	p, err := newImagePolicy([]string{"*:404", "registry.example/*"})
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]string{"webserver:404": "*:404", "registry.example/app": "registry.example/*",
		"registry.example/team/app": "", "nginx": "", "nginx:1.404": ""} {
		if got := p.unpullable(image); got != want {
			t.Errorf("unpullable(%q) = %q, want %q", image, got, want)
		}
	}
}
