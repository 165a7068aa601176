package resourcequota

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/quota"
)

// TestRandomizedConvergence: random creates, deletes and pod finishes
// (seeded; SETPOINT_SEED replays one) against three quotas, one scoped;
// at every step the stored objects never exceed a quota, and once the
// writes stop every status.used equals the recount of the objects.
func TestRandomizedConvergence(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SETPOINT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	h := newHarness(t, Options{})
	h.createQuota("compute", rl("pods", "6", "requests.cpu", "2"))
	h.createQuota("besteffort", rl("pods", "3"), corev1.ResourceQuotaScopeBestEffort)
	h.createQuota("objects", rl("count/configmaps", "4", "count/pods", "10"))
	h.wantStatus("compute", rl("pods", "0", "requests.cpu", "0"))
	h.wantStatus("besteffort", rl("pods", "0"))
	h.wantStatus("objects", rl("count/configmaps", "0", "count/pods", "0"))

	var pods, cms []string
	finished := map[string]bool{}
	for step := range 120 {
		switch op := rng.IntN(10); {
		case op < 4: // create a pod, best-effort or requesting cpu
			name := fmt.Sprintf("p%d", step)
			cpu := ""
			if rng.IntN(2) == 0 {
				cpu = fmt.Sprintf("%dm", 100*(1+rng.IntN(5)))
			}
			if _, err := h.pods.Create(h.ctx, newPod(name, cpu), metav1.CreateOptions{}); err == nil {
				pods = append(pods, name)
			} else if !apierrors.IsForbidden(err) {
				t.Fatalf("step %d: create pod: %v", step, err)
			}
		case op < 6 && len(pods) > 0: // a pod finishes (once)
			name := pods[rng.IntN(len(pods))]
			if finished[name] {
				continue
			}
			finished[name] = true
			phase := []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed}[rng.IntN(2)]
			if err := h.finish(name, phase); err != nil {
				t.Fatalf("step %d: finish %s: %v", step, name, err)
			}
		case op < 7 && len(pods) > 0: // a pod is deleted
			i := rng.IntN(len(pods))
			if err := h.pods.Delete(h.ctx, pods[i], metav1.DeleteOptions{}); err != nil {
				t.Fatalf("step %d: delete pod: %v", step, err)
			}
			pods = append(pods[:i], pods[i+1:]...)
		case op < 9: // create a config map
			name := fmt.Sprintf("cm%d", step)
			if _, err := h.cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err == nil {
				cms = append(cms, name)
			} else if !apierrors.IsForbidden(err) {
				t.Fatalf("step %d: create config map: %v", step, err)
			}
		case len(cms) > 0: // delete a config map
			i := rng.IntN(len(cms))
			if err := h.cms.Delete(h.ctx, cms[i], metav1.DeleteOptions{}); err != nil {
				t.Fatalf("step %d: delete config map: %v", step, err)
			}
			cms = append(cms[:i], cms[i+1:]...)
		}
		if step%10 == 0 {
			h.checkWithinHard(step)
		}
	}
	want := h.recount()
	for name, used := range want {
		h.wantStatus(name, used)
	}
	h.checkWithinHard(-1)
}

// recount is the test's own count of what each quota covers.
func (h *harness) recount() map[string]corev1.ResourceList {
	h.t.Helper()
	pl, err := h.pods.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	cl, err := h.cms.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	compute := rl("pods", "0", "requests.cpu", "0")
	be := rl("pods", "0")
	objs := rl("count/configmaps", strconv.Itoa(len(cl.Items)), "count/pods", strconv.Itoa(len(pl.Items)))
	one := resource.MustParse("1")
	for _, p := range pl.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		compute = quota.Add(compute, corev1.ResourceList{"pods": one})
		if cpu, ok := p.Spec.Containers[0].Resources.Requests["cpu"]; ok {
			compute = quota.Add(compute, corev1.ResourceList{"requests.cpu": cpu})
		} else {
			be = quota.Add(be, corev1.ResourceList{"pods": one})
		}
	}
	return map[string]corev1.ResourceList{"compute": compute, "besteffort": be, "objects": objs}
}

// checkWithinHard: what is stored never passes a quota's hard limits.
func (h *harness) checkWithinHard(step int) {
	h.t.Helper()
	for name, used := range h.recount() {
		q, err := h.quotas.Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		if ok, over := quota.LessThanOrEqual(used, q.Spec.Hard); !ok {
			h.t.Fatalf("step %d: quota %s exceeded on %v: stored %s, hard %s", step, name, over, quota.String(used), quota.String(q.Spec.Hard))
		}
	}
}
