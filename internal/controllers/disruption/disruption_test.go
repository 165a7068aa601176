package disruption

import (
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr(v intstr.IntOrString) *intstr.IntOrString { return &v }

// TestMinAvailableIntAndEviction: a budget of minAvailable 2 over 3 ready
// pods allows one eviction; the evicted pod leaves, the next eviction is
// refused with 429 and the pod stays.
func TestMinAvailableIntAndEviction(t *testing.T) {
	h := newHarness(t, Options{})
	for _, n := range []string{"a", "b", "c"} {
		h.pod(n, "web", nil, true)
	}
	h.pod("d", "web", nil, false)
	h.budget("pdb", "web", ptr(intstr.FromInt32(2)), nil)
	h.wantStatus("pdb", 4, 2, 3, 1)

	if code, body := h.evict("a"); code != http.StatusCreated {
		t.Fatalf("first eviction: %d %s", code, body)
	}
	// the evicted pod is terminating (its node has it): still expected,
	// no longer healthy
	h.wantStatus("pdb", 4, 2, 2, 0)
	code, body := h.evict("b")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "Cannot evict pod as it would violate the pod's disruption budget.") ||
		!strings.Contains(body, "The disruption budget pdb needs 2 healthy pods and has 2 currently") {
		t.Fatalf("second eviction: %d %s", code, body)
	}
	if _, err := h.pods.Get(h.ctx, "b", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused eviction removed the pod: %v", err)
	}
	// the unready pod can always go: it is not healthy
	if code, body := h.evict("d"); code != http.StatusCreated {
		t.Fatalf("unready pod eviction: %d %s", code, body)
	}
	h.wantStatus("pdb", 4, 2, 2, 0)
}

// TestPercentAndMaxUnavailableUseControllersScale: percentages and
// maxUnavailable count the controllers' replicas (a Deployment's for its
// ReplicaSets), not the pods present.
func TestPercentAndMaxUnavailableUseControllersScale(t *testing.T) {
	h := newHarness(t, Options{})
	replicas := int32(5)
	dep, err := h.deps.Create(h.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template("web")}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	depRef := controllerRef("apps/v1", "Deployment", dep)
	old := h.replicaSet("web-old", "web", 1, depRef)
	cur := h.replicaSet("web-new", "web", 4, depRef)
	h.pod("o1", "web", controllerRef("apps/v1", "ReplicaSet", old), true)
	for _, n := range []string{"n1", "n2", "n3"} {
		h.pod(n, "web", controllerRef("apps/v1", "ReplicaSet", cur), true)
	}
	// 4 ready of the Deployment's 5: 60% of 5 is 3, one disruption allowed
	h.budget("pct", "web", ptr(intstr.FromString("60%")), nil)
	h.wantStatus("pct", 5, 3, 4, 1)
	// maxUnavailable 30% of 5, rounded up, is 2: desired 3
	h.budget("maxu", "web", nil, ptr(intstr.FromString("30%")))
	h.wantStatus("maxu", 5, 3, 4, 1)
	// maxUnavailable 1 as an integer: desired 4, none allowed
	h.budget("maxone", "web", nil, ptr(intstr.FromInt32(1)))
	h.wantStatus("maxone", 5, 4, 4, 0)

	// a StatefulSet-less, scale-less owner: a Job's pod is an error
	job := controllerRef("batch/v1", "Job", &metav1.ObjectMeta{Name: "j", UID: "00000000-0000-0000-0000-000000000001"})
	h.pod("jobpod", "batchy", job, true)
	h.budget("jobs", "batchy", ptr(intstr.FromString("50%")), nil)
	h.eventually("SyncFailed", func() error {
		pdb, err := h.pdbs.Get(h.ctx, "jobs", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(pdb.Status.Conditions) != 1 || pdb.Status.Conditions[0].Reason != "SyncFailed" ||
			pdb.Status.Conditions[0].Message != "jobs.batch does not implement the scale subresource" || pdb.Status.DisruptionsAllowed != 0 {
			return errorf("conditions %+v", pdb.Status.Conditions)
		}
		return nil
	})
	// unmanaged pods with a percentage: left out of the count
	h.pod("lonely", "solo", nil, true)
	h.budget("solo", "solo", ptr(intstr.FromString("50%")), nil)
	h.wantStatus("solo", 0, 0, 1, 0)
}

// TestStaleDisruptionTargetCleared: a DisruptionTarget condition on a pod
// that is not deleted is set to False once stale.
func TestStaleDisruptionTargetCleared(t *testing.T) {
	h := newHarness(t, Options{})
	h.pod("p", "x", nil, true)
	p, err := h.pods.Get(h.ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := metav1.NewTime(metav1.Now().Add(-3 * StalePodDisruptionTimeout))
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", LastTransitionTime: old})
	if _, err := h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("condition False", func() error {
		p, err := h.pods.Get(h.ctx, "p", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := disruptionTarget(p); c == nil || c.Status != corev1.ConditionFalse {
			return errorf("condition %+v", c)
		}
		return nil
	})
	if _, err := h.pods.Get(h.ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
