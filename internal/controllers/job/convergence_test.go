package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/controllers/expectations"
)

// invariantWatch follows a Job and its pods through watches and records
// the most active pods and the most succeeded pods it ever saw, and every
// pod UID.
type invariantWatch struct {
	mu           sync.Mutex
	active       map[types.UID]bool
	uids         map[types.UID]bool
	maxActive    int
	maxSucceeded int32
	history      map[types.UID][]string // each pod's observed states, for failure reports
	wg           sync.WaitGroup
}

func (h *harness) watchInvariants(ctx context.Context, j *batchv1.Job) *invariantWatch {
	h.t.Helper()
	w := &invariantWatch{active: map[types.UID]bool{}, uids: map[types.UID]bool{}, history: map[types.UID][]string{}}
	pw, err := h.pods.Watch(ctx, metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(j.UID)})
	if err != nil {
		h.t.Fatal(err)
	}
	jw, err := h.jobs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + j.Name})
	if err != nil {
		h.t.Fatal(err)
	}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		for ev := range pw.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			w.mu.Lock()
			w.uids[p.UID] = true
			w.history[p.UID] = append(w.history[p.UID], podState(ev.Type, p))
			w.active[p.UID] = ev.Type != watch.Deleted && p.DeletionTimestamp == nil &&
				p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
			n := 0
			for _, a := range w.active {
				if a {
					n++
				}
			}
			w.maxActive = max(w.maxActive, n)
			w.mu.Unlock()
		}
	}()
	go func() {
		defer w.wg.Done()
		for ev := range jw.ResultChan() {
			if job, ok := ev.Object.(*batchv1.Job); ok {
				w.mu.Lock()
				w.maxSucceeded = max(w.maxSucceeded, job.Status.Succeeded)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// TestRandomizedConvergence drives Jobs with random pod successes,
// failures and deletions and controller restarts, on a fake clock, and
// checks that every finished pod is counted once, completions are never
// exceeded, parallelism is never exceeded, and the Job completes.
func TestRandomizedConvergence(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("JOB_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (rerun with JOB_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h := newHarness(t)
	indexed := batchv1.IndexedCompletion
	for round, mode := range []*batchv1.CompletionMode{nil, &indexed} {
		completions, parallelism := int32(8+rng.IntN(6)), int32(2+rng.IntN(4))
		j := newJob(fmt.Sprintf("random-%d", round), completions, parallelism)
		j.Spec.CompletionMode = mode
		j.Spec.BackoffLimit = new(int32(1000))
		j = h.create(j)
		t.Logf("round %d: %s completions %d parallelism %d", round, completionMode(j), completions, parallelism)
		h.randomRun(rng, j)
	}
}

func (h *harness) randomRun(rng *rand.Rand, j *batchv1.Job) {
	t := h.t
	ctx, cancel := context.WithCancel(context.Background())
	w := h.watchInvariants(ctx, j)
	var succeeded, failed, deleted, restarts int
	act := func(p *corev1.Pod, choice int) {
		switch {
		case choice < 50:
			if h.finish(p, 0) {
				succeeded++
				t.Logf("succeeded %s", p.Name)
			}
		case choice < 70:
			if h.finish(p, 1) {
				failed++
				t.Logf("failed %s", p.Name)
			}
		case choice < 85:
			err := h.pods.Delete(context.Background(), p.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{ResourceVersion: &p.ResourceVersion}})
			if err == nil {
				deleted++
				t.Logf("deleted %s", p.Name)
			}
		default:
			h.restart()
			restarts++
			t.Logf("restarted the controller")
		}
	}
	for step := 0; step < 400 && trueCondition(h.get(j.Name), batchv1.JobComplete) == nil; step++ {
		active := h.activePods(j)
		if len(active) == 0 {
			// Toward the end of any back-off, in steps shorter than the
			// expectations' TTL and only while the controller awaits no
			// pod: a step past the TTL would let it forget creates still
			// in flight and create their pods again (as kube's does when
			// five minutes pass without the watch events).
			if h.expectationsMet(j) {
				h.clk.Step(expectations.TTL - time.Second)
				h.nudge(j.Name)
			}
			time.Sleep(30 * time.Millisecond)
			continue
		}
		act(active[rng.IntN(len(active))], rng.IntN(100))
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
	}
	done := h.waitCondition(j.Name, batchv1.JobComplete)
	h.eventually("no pod keeps the finalizer", func() error {
		for _, p := range h.jobPods(j) {
			if hasTrackingFinalizer(p) {
				return fmt.Errorf("pod %s has the finalizer", p.Name)
			}
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	cancel()
	w.wg.Wait()
	st := done.Status
	t.Logf("%s: marked %d succeeded, %d failed, deleted %d, %d restarts; status succeeded %d failed %d; %d pods; max active %d",
		j.Name, succeeded, failed, deleted, restarts, st.Succeeded, st.Failed, len(w.uids), w.maxActive)
	if trueCondition(done, batchv1.JobFailed) != nil {
		t.Errorf("%s failed: %+v", j.Name, st.Conditions)
	}
	if st.Succeeded != *j.Spec.Completions || int(st.Succeeded) != succeeded {
		t.Errorf("%s: status succeeded %d, completions %d, pods marked succeeded %d", j.Name, st.Succeeded, *j.Spec.Completions, succeeded)
	}
	if int(st.Failed) != failed+deleted {
		t.Errorf("%s: status failed %d, want %d failed + %d deleted", j.Name, st.Failed, failed, deleted)
	}
	if int(st.Succeeded+st.Failed) != len(w.uids) {
		t.Errorf("%s: succeeded+failed %d, but %d pods existed", j.Name, st.Succeeded+st.Failed, len(w.uids))
	}
	if t.Failed() {
		for uid, states := range w.history {
			t.Logf("pod %s:\n  %s", uid, strings.Join(states, "\n  "))
		}
	}
	if w.maxActive > int(*j.Spec.Parallelism) {
		t.Errorf("%s: %d active pods at once, parallelism %d", j.Name, w.maxActive, *j.Spec.Parallelism)
	}
	if w.maxSucceeded > *j.Spec.Completions {
		t.Errorf("%s: succeeded reached %d, completions %d", j.Name, w.maxSucceeded, *j.Spec.Completions)
	}
	if isIndexed(j) && st.CompletedIndexes != fmt.Sprintf("0-%d", *j.Spec.Completions-1) {
		t.Errorf("%s: completedIndexes %q", j.Name, st.CompletedIndexes)
	}
}

// podState describes a watched pod for failure reports.
func podState(t watch.EventType, p *corev1.Pod) string {
	return fmt.Sprintf("%s %s rv=%s phase=%s deleting=%t finalizer=%t index=%s", t, p.Name, p.ResourceVersion,
		p.Status.Phase, p.DeletionTimestamp != nil, hasTrackingFinalizer(p), p.Annotations[batchv1.JobCompletionIndexAnnotation])
}
