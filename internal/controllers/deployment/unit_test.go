package deployment

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func template(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
	}
}

func TestComputeHash(t *testing.T) {
	a, b := template("nginx:1"), template("nginx:2")
	ha := podutil.ComputeHash(&a, nil)
	if ha != podutil.ComputeHash(&a, nil) || ha != podutil.ComputeHash(a.DeepCopy(), nil) {
		t.Fatal("hash is not a function of the template's content")
	}
	if ha == podutil.ComputeHash(&b, nil) {
		t.Fatal("different templates share a hash")
	}
	zero, one := int32(0), int32(1)
	// A set collision count is mixed in, even when it is zero.
	if podutil.ComputeHash(&a, &zero) == ha || podutil.ComputeHash(&a, &zero) == podutil.ComputeHash(&a, &one) {
		t.Fatal("collisionCount is not mixed into the hash")
	}
	// SafeEncodeString's alphabet: no vowels, no look-alikes.
	for _, r := range ha {
		if !strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", r) {
			t.Fatalf("hash %q has %q outside the safe alphabet", ha, r)
		}
	}
	// 1000 image versions, no collision (Kubernetes' FNV property test).
	seen := map[string]int{}
	for i := range 1000 {
		tm := template("registry/cats:v0." + strconv.Itoa(i) + ".0")
		h := podutil.ComputeHash(&tm, nil)
		if j, dup := seen[h]; dup {
			t.Fatalf("collision between versions %d and %d", i, j)
		}
		seen[h] = i
	}
}

func rolling(n int32, surge, unavail intstr.IntOrString) *appsv1.Deployment {
	return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &n, Strategy: appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}}}}
}

func TestFenceposts(t *testing.T) {
	pct := intstr.FromString("25%")
	for _, c := range []struct {
		d             *appsv1.Deployment
		surge, unavai int32
	}{
		{rolling(10, pct, pct), 3, 2},                                    // surge rounds up, unavailable down
		{rolling(1, pct, pct), 1, 0},                                     // 0.25 -> 1 and 0
		{rolling(3, intstr.FromInt32(0), intstr.FromString("1%")), 0, 1}, // both 0 -> unavailable 1
		{rolling(2, intstr.FromInt32(1), intstr.FromInt32(5)), 1, 2},     // capped at replicas
		{&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: new(int32(4)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}, 0, 0},
		{&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: new(int32(8)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}}}, 2, 2}, // unset: 25%
	} {
		if s, u := maxSurge(c.d), maxUnavailable(c.d); s != c.surge || u != c.unavai {
			t.Errorf("replicas %d: surge %d unavailable %d, want %d %d", *c.d.Spec.Replicas, s, u, c.surge, c.unavai)
		}
	}
}

func rs(name string, spec, statusReplicas, avail int32, created time.Time) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &spec},
		Status: appsv1.ReplicaSetStatus{Replicas: statusReplicas, AvailableReplicas: avail}}
}

func TestNewRSNewReplicas(t *testing.T) {
	now := time.Now()
	d := rolling(10, intstr.FromInt32(3), intstr.FromInt32(2))
	old := rs("old", 10, 10, 10, now)
	nw := rs("new", 0, 0, 0, now.Add(time.Second))
	if n := newRSNewReplicas(d, []*appsv1.ReplicaSet{old, nw}, nw); n != 3 {
		t.Errorf("first step = %d, want 3 (maxSurge)", n)
	}
	// The old ReplicaSet was scaled to 8 but still reports 10 pods: the
	// new one may not grow past the surge until they are gone.
	old = rs("old", 8, 10, 10, now)
	nw = rs("new", 3, 3, 3, now.Add(time.Second))
	if n := newRSNewReplicas(d, []*appsv1.ReplicaSet{old, nw}, nw); n != 3 {
		t.Errorf("with old pods still reported = %d, want 3", n)
	}
	old.Status.Replicas = 8
	if n := newRSNewReplicas(d, []*appsv1.ReplicaSet{old, nw}, nw); n != 5 {
		t.Errorf("after old pods went = %d, want 5", n)
	}
	// Never above spec.replicas.
	old = rs("old", 1, 1, 1, now)
	nw = rs("new", 9, 9, 9, now.Add(time.Second))
	if n := newRSNewReplicas(d, []*appsv1.ReplicaSet{old, nw}, nw); n != 10 {
		t.Errorf("last step = %d, want 10", n)
	}
	// Recreate jumps to spec.replicas.
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if n := newRSNewReplicas(d, []*appsv1.ReplicaSet{nw}, nw); n != 10 {
		t.Errorf("recreate = %d", n)
	}
}

func TestAvailableBound(t *testing.T) {
	now := time.Now()
	// Scaled from 10 to 8 with its status still saying 10 available.
	old := rs("old", 8, 10, 10, now)
	nw := rs("new", 3, 3, 3, now)
	if n := availableBound([]*appsv1.ReplicaSet{old, nw}); n != 11 {
		t.Errorf("availableBound = %d, want 11", n)
	}
}

func TestProportionalShares(t *testing.T) {
	now := time.Now()
	// 10 replicas, surge 3, in the middle of a rollout: old 8 + new 5 = 13.
	// Scaled to 20 (max 23): 10 more to share 8:5 of 23 -> 14 and 9.
	d := rolling(20, intstr.FromInt32(3), intstr.FromInt32(2))
	old := rs("old", 8, 8, 8, now)
	nw := rs("new", 5, 5, 5, now.Add(time.Second))
	for _, x := range []*appsv1.ReplicaSet{old, nw} {
		x.Annotations = map[string]string{MaxReplicasAnnotation: "13", DesiredReplicasAnnotation: "10"}
	}
	toAdd := int32(23 - 13)
	sortBySizeNewer([]*appsv1.ReplicaSet{old, nw})
	p1 := proportion(old, d, toAdd, 0)
	p2 := proportion(nw, d, toAdd, p1)
	if p1 != 6 || p2 != 4 {
		t.Errorf("shares = %d, %d; want 6, 4", p1, p2)
	}
}

func TestNewRSAnnotationsOnRollback(t *testing.T) {
	d := rolling(2, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Annotations = map[string]string{"team": "a", RevisionAnnotation: "9", lastAppliedAnnotation: "{}"}
	r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{RevisionAnnotation: "1"}}}
	if !setNewRSAnnotations(d, r, 3, true) {
		t.Fatal("no change reported")
	}
	want := map[string]string{"team": "a", RevisionAnnotation: "3", RevisionHistoryAnnotation: "1"}
	for k, v := range want {
		if r.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Annotations[k], v)
		}
	}
	if _, ok := r.Annotations[lastAppliedAnnotation]; ok {
		t.Error("last-applied copied")
	}
	setNewRSAnnotations(d, r, 5, true)
	if r.Annotations[RevisionHistoryAnnotation] != "1,3" || r.Annotations[RevisionAnnotation] != "5" {
		t.Errorf("second rollback: %v", r.Annotations)
	}
	// Never lowered (numeric, not string, comparison: 10 > 9).
	r.Annotations[RevisionAnnotation] = "10"
	if setNewRSAnnotations(d, r, 9, true) || r.Annotations[RevisionAnnotation] != "10" {
		t.Errorf("revision lowered: %v", r.Annotations)
	}
}

func TestEqualIgnoreHash(t *testing.T) {
	a, b := template("x"), template("x")
	b.Labels = map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: "abc"}
	if !equalIgnoreHash(&a, &b) {
		t.Error("hash label not ignored")
	}
	if len(b.Labels) != 2 {
		t.Error("argument modified")
	}
	b.Labels["extra"] = "1"
	if equalIgnoreHash(&a, &b) {
		t.Error("extra label ignored")
	}
}

func TestProgressConditions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := rolling(2, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Spec.ProgressDeadlineSeconds = new(int32(60))
	d.Generation = 1
	d.Status.Conditions = []appsv1.DeploymentCondition{newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSCreated, "", now)}
	nw := rs("new", 2, 2, 0, now)
	// No progress, 30s later: still progressing, re-check in 30s.
	st := rolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, now.Add(30*time.Second))
	d.Status.Replicas, d.Status.UpdatedReplicas = 2, 2
	st = rolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, now.Add(30*time.Second))
	if c := getCondition(st, appsv1.DeploymentProgressing); c.Reason != ReasonNewRSCreated {
		t.Fatalf("reason %s", c.Reason)
	}
	if after := progressCheckAfter(d, &st, now.Add(30*time.Second)); after != 30*time.Second {
		t.Errorf("re-check after %v, want 30s", after)
	}
	// Past the deadline: timed out.
	st = rolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, now.Add(61*time.Second))
	if c := getCondition(st, appsv1.DeploymentProgressing); c.Reason != ReasonTimedOut || c.Status != corev1.ConditionFalse {
		t.Fatalf("condition %+v", c)
	}
	if c := getCondition(st, appsv1.DeploymentAvailable); c.Status != corev1.ConditionFalse || c.Reason != ReasonMinimumUnavailable {
		t.Errorf("available %+v", c)
	}
	// Complete: NewReplicaSetAvailable, Available true.
	nw.Status.AvailableReplicas, nw.Status.ReadyReplicas = 2, 2
	st = rolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, now.Add(62*time.Second))
	if c := getCondition(st, appsv1.DeploymentProgressing); c.Reason != ReasonNewRSAvailable || c.Status != corev1.ConditionTrue {
		t.Fatalf("condition %+v", c)
	}
	if c := getCondition(st, appsv1.DeploymentAvailable); c.Status != corev1.ConditionTrue || c.Reason != ReasonMinimumAvailable {
		t.Errorf("available %+v", c)
	}
}
