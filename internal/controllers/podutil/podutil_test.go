package podutil

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func readyPod(name string, since time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(since)}}
	return p
}

func TestActiveAndTerminating(t *testing.T) {
	now := metav1.NewTime(t0)
	cases := []struct {
		name              string
		phase             corev1.PodPhase
		deleting          bool
		active, terminate bool
	}{
		{"pending", corev1.PodPending, false, true, false},
		{"running", corev1.PodRunning, false, true, false},
		{"succeeded", corev1.PodSucceeded, false, false, false},
		{"failed", corev1.PodFailed, false, false, false},
		{"running-deleting", corev1.PodRunning, true, false, true},
		{"failed-deleting", corev1.PodFailed, true, false, false},
	}
	for _, c := range cases {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: c.phase}}
		if c.deleting {
			p.DeletionTimestamp = &now
		}
		if got := IsPodActive(p); got != c.active {
			t.Errorf("%s: IsPodActive=%v, want %v", c.name, got, c.active)
		}
		if got := IsPodTerminating(p); got != c.terminate {
			t.Errorf("%s: IsPodTerminating=%v, want %v", c.name, got, c.terminate)
		}
	}
	if n := len(FilterActivePods([]*corev1.Pod{{}, {Status: corev1.PodStatus{Phase: corev1.PodFailed}}})); n != 1 {
		t.Errorf("FilterActivePods kept %d, want 1", n)
	}
}

func TestAvailability(t *testing.T) {
	p := readyPod("a", t0)
	if !IsPodReady(p) || !IsPodAvailable(p, 0, metav1.NewTime(t0)) {
		t.Fatal("ready pod with minReadySeconds 0 must be available at once")
	}
	if IsPodAvailable(p, 10, metav1.NewTime(t0.Add(9*time.Second))) {
		t.Error("available before minReadySeconds elapsed")
	}
	if !IsPodAvailable(p, 10, metav1.NewTime(t0.Add(10*time.Second))) {
		t.Error("not available when minReadySeconds elapsed exactly")
	}
	if at, ok := AvailableAt(p, 10); !ok || !at.Equal(t0.Add(10*time.Second)) {
		t.Errorf("AvailableAt = %v %v", at, ok)
	}
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	if IsPodReady(p) || IsPodAvailable(p, 0, metav1.NewTime(t0)) {
		t.Error("Ready=False pod reported ready/available")
	}
	if IsPodReady(&corev1.Pod{}) {
		t.Error("pod without conditions reported ready")
	}
}

func TestUpdatePodCondition(t *testing.T) {
	var st corev1.PodStatus
	c := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}
	if !UpdatePodCondition(&st, &c) || len(st.Conditions) != 1 {
		t.Fatal("adding a condition must report a change")
	}
	c2 := c
	c2.LastTransitionTime = metav1.NewTime(t0.Add(time.Hour))
	if UpdatePodCondition(&st, &c2) {
		t.Error("same status with a new transition time must be no change")
	}
	if !st.Conditions[0].LastTransitionTime.Equal(&c.LastTransitionTime) {
		t.Error("transition time changed without a status change")
	}
	c3 := c2
	c3.Status = corev1.ConditionFalse
	if !UpdatePodCondition(&st, &c3) || st.Conditions[0].Status != corev1.ConditionFalse ||
		!st.Conditions[0].LastTransitionTime.Equal(&c3.LastTransitionTime) {
		t.Errorf("status change not applied: %+v", st.Conditions[0])
	}
	if i, _ := GetPodCondition(&st, corev1.PodScheduled); i != -1 {
		t.Error("missing condition found")
	}
}

// TestRankingOrder builds one pod per ranking key, each a better keeper
// than the previous, and checks that sorting any shuffle restores the
// order.
func TestRankingOrder(t *testing.T) {
	newPod := func(name, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	unassigned := newPod("unassigned", "", corev1.PodRunning)
	pending := newPod("pending", "n", corev1.PodPending)
	unknown := newPod("unknown", "n", corev1.PodUnknown)
	notReady := newPod("running-not-ready", "n", corev1.PodRunning)
	readyShort := readyPod("ready-recently", t0.Add(time.Hour))
	readyShort.Spec.NodeName = "n"
	readyShort.CreationTimestamp = metav1.NewTime(t0)
	restarts := readyPod("ready-long-restarts", t0)
	restarts.Spec.NodeName = "n"
	restarts.CreationTimestamp = metav1.NewTime(t0)
	restarts.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 3}}
	newer := readyPod("ready-long-newer", t0)
	newer.Spec.NodeName = "n"
	newer.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	older := readyPod("ready-long-older", t0)
	older.Spec.NodeName = "n"
	older.CreationTimestamp = metav1.NewTime(t0)
	want := []*corev1.Pod{unassigned, pending, unknown, notReady, readyShort, restarts, newer, older}

	rng := rand.New(rand.NewSource(1))
	for range 50 {
		got := append([]*corev1.Pod(nil), want...)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sort.Sort(ActivePods(got))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("position %d: got %s, want %s", i, got[i].Name, want[i].Name)
			}
		}
	}
}

func TestRankedPodsCostAndRank(t *testing.T) {
	a, b, c := readyPod("a", t0), readyPod("b", t0), readyPod("c", t0)
	a.Annotations = map[string]string{DeletionCostAnnotation: "10"}
	b.Annotations = map[string]string{DeletionCostAnnotation: "-5"}
	// c: cost 0 but doubled up (rank 2); b lowest cost still goes first.
	s := RankedPods{Pods: []*corev1.Pod{a, c, b}, Rank: []int{0, 2, 0}}
	sort.Sort(s)
	if s.Pods[0] != b || s.Pods[1] != c || s.Pods[2] != a {
		t.Fatalf("order %s %s %s, want b c a", s.Pods[0].Name, s.Pods[1].Name, s.Pods[2].Name)
	}
	if s.Rank[1] != 2 {
		t.Error("ranks not swapped with pods")
	}
	d, e := readyPod("d", t0), readyPod("e", t0)
	s = RankedPods{Pods: []*corev1.Pod{d, e}, Rank: []int{0, 1}}
	sort.Sort(s)
	if s.Pods[0] != e {
		t.Error("doubled-up pod not first")
	}
}
