package cronjob

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// jobWatcher follows every Job with a watch of the test's own and checks,
// at each Job the controller creates, the invariants users rely on: the
// scheduled time is one of the schedule's times and not in the future, the
// name is derived from it, and under Forbid and Replace no other Job of the
// CronJob is running at that moment.
type jobWatcher struct {
	t    *testing.T
	h    *harness
	cjs  map[types.UID]*batchv1.CronJob // fixed at start; read-only
	mu   sync.Mutex
	errs []string
	// running holds, per CronJob UID, the unfinished Jobs that exist.
	running map[types.UID]map[string]bool
	created int
	done    chan struct{}
}

func (h *harness) watchJobs(cjs []*batchv1.CronJob) *jobWatcher {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := h.jobs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	jw := &jobWatcher{t: h.t, h: h, cjs: map[types.UID]*batchv1.CronJob{}, running: map[types.UID]map[string]bool{},
		done: make(chan struct{})}
	for _, cj := range cjs {
		jw.cjs[cj.UID] = cj
		jw.running[cj.UID] = map[string]bool{}
	}
	go func() {
		defer close(jw.done)
		for ev := range w.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok {
				jw.observe(ev.Type, j)
			}
		}
	}()
	h.t.Cleanup(func() { cancel(); w.Stop(); <-jw.done })
	return jw
}

func (jw *jobWatcher) fail(format string, args ...any) {
	jw.errs = append(jw.errs, fmt.Sprintf(format, args...))
}

func (jw *jobWatcher) observe(typ watch.EventType, j *batchv1.Job) {
	ref := metav1.GetControllerOf(j)
	if ref == nil {
		return
	}
	cj := jw.cjs[ref.UID]
	if cj == nil {
		return
	}
	jw.mu.Lock()
	defer jw.mu.Unlock()
	running := jw.running[cj.UID]
	switch {
	case typ == watch.Deleted || isFinished(j):
		delete(running, j.Name)
	case typ == watch.Added:
		jw.created++
		jw.checkCreated(cj, j, running)
		running[j.Name] = true
	}
}

func (jw *jobWatcher) checkCreated(cj *batchv1.CronJob, j *batchv1.Job, running map[string]bool) {
	at, err := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	if err != nil {
		jw.fail("job %s: scheduled-timestamp annotation: %v", j.Name, err)
		return
	}
	if want := cj.Name + "-" + strconv.FormatInt(at.Unix()/60, 10); j.Name != want {
		jw.fail("job %s for %s: want name %s", j.Name, at, want)
	}
	if sched := mustSchedule(jw.t, cj); !sched.Next(at.Add(-time.Second)).Equal(at) {
		jw.fail("job %s of %s (%q, tz %v): %s is not a schedule time", j.Name, cj.Name, cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""), at)
	}
	if now := jw.h.clk.Now(); at.After(now) {
		jw.fail("job %s for %s created at %s, before its time", j.Name, at, now)
	}
	if p := cj.Spec.ConcurrencyPolicy; p != batchv1.AllowConcurrent && len(running) > 0 {
		jw.fail("job %s of %s (%s) created while %v run", j.Name, cj.Name, p, running)
	}
}

func (jw *jobWatcher) errors() []string {
	jw.mu.Lock()
	defer jw.mu.Unlock()
	return append([]string(nil), jw.errs...)
}

func mustSchedule(t *testing.T, cj *batchv1.CronJob) cron.Schedule {
	spec, _ := scheduleSpec(cj)
	s, err := parseSchedule(spec)
	if err != nil {
		t.Fatalf("schedule of %s: %v", cj.Name, err)
	}
	return s
}

// model is what the test knows of one CronJob between rest points.
type model struct {
	cj *batchv1.CronJob
	// last is status.lastScheduleTime at the previous rest point.
	last      *metav1.Time
	suspended bool
	// justSuspended is set while the controller may not yet have seen a
	// suspension made in this phase: it may still start the pending time.
	justSuspended bool
}

var (
	randSchedules = []string{"* * * * *", "*/5 * * * *", "0,30 * * * *", "15 */2 * * *", "@hourly", "@daily",
		"*/3 9-17 * * 1-5", "0 0 * * 0"}
	randZones = []*string{nil, ptr.To("UTC"), ptr.To("America/New_York"), ptr.To("Asia/Kolkata"), ptr.To("Australia/Adelaide")}
)

func randCronJob(rng *rand.Rand, i int) *batchv1.CronJob {
	cj := newCronJob(fmt.Sprintf("rand-%d", i), randSchedules[rng.Intn(len(randSchedules))])
	cj.Spec.TimeZone = randZones[rng.Intn(len(randZones))]
	cj.Spec.ConcurrencyPolicy = []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent,
		batchv1.ReplaceConcurrent}[rng.Intn(3)]
	if rng.Intn(3) == 0 {
		cj.Spec.StartingDeadlineSeconds = ptr.To([]int64{45, 600, 7200}[rng.Intn(3)])
	}
	cj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(rng.Intn(4)))
	cj.Spec.FailedJobsHistoryLimit = ptr.To(int32(rng.Intn(3)))
	return cj
}

// testConvergence drives random CronJobs on the fake clock: random Job
// finishes, suspensions and clock jumps (seconds to a day). At every rest
// point it checks status.active against the running Jobs, the history
// limits and lastScheduleTime against the schedule; the watch checks every
// created Job.
func testConvergence(t *testing.T, srv *testserver.Server) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("CRONJOB_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (CRONJOB_SEED reruns it)", seed)
	rng := rand.New(rand.NewSource(seed))
	h := newHarness(t, srv)
	var models []*model
	var cjs []*batchv1.CronJob
	for i := range 6 {
		cj := h.create(randCronJob(rng, i))
		t.Logf("%s: %q tz=%v %s deadline=%v limits=%d/%d", cj.Name, cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, "-"),
			cj.Spec.ConcurrencyPolicy, ptr.Deref(cj.Spec.StartingDeadlineSeconds, -1),
			*cj.Spec.SuccessfulJobsHistoryLimit, *cj.Spec.FailedJobsHistoryLimit)
		models = append(models, &model{cj: cj})
		cjs = append(cjs, cj)
	}
	jw := h.watchJobs(cjs)
	for step := range 20 {
		for _, m := range models {
			h.randomFinishes(rng, m)
			m.justSuspended = false
			if rng.Intn(12) == 0 {
				m.suspended = !m.suspended
				m.justSuspended = m.suspended
				h.mutate(m.cj.Name, func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(m.suspended) })
			}
		}
		h.settle()
		h.checkRest(models, fmt.Sprintf("step %d after finishes", step))
		var d time.Duration
		switch r := rng.Intn(10); {
		case r < 7:
			d = time.Duration(10+rng.Intn(170)) * time.Second
		case r < 9:
			d = time.Duration(3+rng.Intn(37)) * time.Minute
		default:
			d = time.Duration(2+rng.Intn(28)) * time.Hour
		}
		h.step(d)
		h.checkRest(models, fmt.Sprintf("step %d after +%s", step, d))
		if errs := jw.errors(); len(errs) > 0 {
			t.Fatalf("step %d: %v", step, errs)
		}
	}
	jw.mu.Lock()
	created := jw.created
	jw.mu.Unlock()
	t.Logf("%d jobs created, clock at %s", created, h.clk.Now().UTC())
	if created == 0 {
		t.Error("no job was created")
	}
}

// randomFinishes finishes each running Job of m with probability 1/2
// (complete 2 in 3).
func (h *harness) randomFinishes(rng *rand.Rand, m *model) {
	for _, j := range h.jobsOf(m.cj) {
		if !isFinished(&j) && j.DeletionTimestamp == nil && rng.Intn(2) == 0 {
			h.finish(j.Name, rng.Intn(3) > 0)
		}
	}
}

// checkRest waits until every CronJob's status is what the model says it
// must be at the fake clock's time, then records lastScheduleTime.
func (h *harness) checkRest(models []*model, when string) {
	h.t.Helper()
	for _, m := range models {
		h.eventually(when+": "+m.cj.Name, func() error {
			if err := h.restError(m); err != nil {
				return fmt.Errorf("%w; events %v", err, h.eventsOf(m.cj.Name))
			}
			return nil
		})
		m.last = h.get(m.cj.Name).Status.LastScheduleTime
	}
}

func (h *harness) restError(m *model) error {
	cj := h.get(m.cj.Name)
	jobs := h.jobsOf(cj)
	running := map[types.UID]*batchv1.Job{}
	var complete, failed int32
	for i := range jobs {
		j := &jobs[i]
		switch finishedCondition(j) {
		case batchv1.JobComplete:
			complete++
		case batchv1.JobFailed:
			failed++
		default:
			running[j.UID] = j
		}
	}
	if len(cj.Status.Active) != len(running) {
		return fmt.Errorf("status.active %v, running jobs %v", cj.Status.Active, running)
	}
	for _, ref := range cj.Status.Active {
		if running[ref.UID] == nil {
			return fmt.Errorf("status.active names %s, not a running job", ref.Name)
		}
	}
	if complete > *cj.Spec.SuccessfulJobsHistoryLimit || failed > *cj.Spec.FailedJobsHistoryLimit {
		return fmt.Errorf("%d complete and %d failed jobs kept, limits %d/%d", complete, failed,
			*cj.Spec.SuccessfulJobsHistoryLimit, *cj.Spec.FailedJobsHistoryLimit)
	}
	got := cj.Status.LastScheduleTime
	same := func(want *time.Time) bool {
		return (want == nil) == (got == nil) && (want == nil || want.Equal(got.Time))
	}
	want := h.expectedLast(m, m.suspended, running)
	if same(want) || (m.justSuspended && same(h.expectedLast(m, false, running))) {
		return nil
	}
	return fmt.Errorf("lastScheduleTime %v, want %v (now %s)", got, want, h.clk.Now().UTC())
}

// kubeEstimateSkips reports whether Kubernetes' estimate of the missed
// times (from the interval between the first two, which irregular
// schedules such as "*/3 9-17 * * 1-5" break) lands past now: then
// kube-controller-manager starts nothing until the next schedule time, and
// so do we.
func kubeEstimateSkips(sched cron.Schedule, earliest, now time.Time) bool {
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t2) {
		return false
	}
	interval := t2.Sub(t1).Round(time.Second)
	count := now.Sub(t1)/interval + 1
	return sched.Next(t1.Add((count - 2) * interval)).After(now)
}

// expectedLast is lastScheduleTime as Kubernetes' rules give it: the most
// recent schedule time after the previous one (or creation) and within the
// starting deadline, unless suspended, or Forbid with a Job running.
func (h *harness) expectedLast(m *model, suspended bool, running map[types.UID]*batchv1.Job) *time.Time {
	prev := func() *time.Time {
		if m.last == nil {
			return nil
		}
		return &m.last.Time
	}
	if suspended {
		return prev()
	}
	now := h.clk.Now()
	earliest := m.cj.CreationTimestamp.Time
	if m.last != nil {
		earliest = m.last.Time
	}
	if d := m.cj.Spec.StartingDeadlineSeconds; d != nil {
		if lo := now.Add(-time.Duration(*d) * time.Second); lo.After(earliest) {
			earliest = lo
		}
	}
	sched := mustSchedule(h.t, m.cj)
	var recent *time.Time
	for t := sched.Next(earliest); !t.After(now); t = sched.Next(t) {
		recent = &t
	}
	if recent == nil || kubeEstimateSkips(sched, earliest, now) {
		return prev()
	}
	if m.cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent {
		for _, j := range running {
			at, _ := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
			return &at
		}
	}
	return recent
}
