package cronjob

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestCronJob runs the controller's scenarios against one API server (its
// start is the slow part under -race), each with its own controller,
// fake clock and namespace.
func TestCronJob(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *testserver.Server)
	}{
		{"ScheduleLife", testScheduleLife},
		{"Forbid", testForbid},
		{"Replace", testReplace},
		{"AllowOverlaps", testAllowOverlaps},
		{"HistoryLimits", testHistoryLimits},
		{"CleanupRetried", testCleanupRetried},
		{"Suspend", testSuspend},
		{"MissedStarts", testMissedStarts},
		{"TimeZone", testTimeZone},
		{"UnexpectedAndMissingJobs", testUnexpectedAndMissingJobs},
		{"InvalidSchedule", testInvalidSchedule},
		{"LostStatusWrite", testLostStatusWrite},
		{"Convergence", testConvergence},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, srv) })
	}
}

// testScheduleLife: a Job appears at each schedule time with the name,
// labels, annotations and owner Kubernetes gives it; finishing it updates
// status; nothing is created between schedule times.
func testScheduleLife(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	cj := h.create(newCronJob("life", "*/1 * * * *"))
	h.settle()
	if jobs := h.jobsOf(cj); len(jobs) != 0 {
		t.Fatalf("jobs before the first schedule time: %d", len(jobs))
	}
	m := h.toNextMinute()
	name := "life-" + strconv.FormatInt(m.Unix()/60, 10)
	jobs := h.jobsOf(cj)
	if len(jobs) != 1 || jobs[0].Name != name {
		t.Fatalf("jobs at %s: %+v, want one named %s", m, jobNames(jobs), name)
	}
	j := jobs[0]
	if got := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != m.In(time.Local).Format(time.RFC3339) && got != m.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled-timestamp annotation %q, want %s", got, m.UTC().Format(time.RFC3339))
	}
	if j.Labels["cron"] != "life" || j.Annotations["note"] != "from-template" {
		t.Errorf("template labels/annotations not copied: %v %v", j.Labels, j.Annotations)
	}
	ref := metav1.GetControllerOf(&j)
	if ref == nil || ref.Kind != "CronJob" || ref.APIVersion != "batch/v1" || ref.UID != cj.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller ref %+v", ref)
	}
	st := h.get("life").Status
	if len(st.Active) != 1 || st.Active[0].Name != name || st.Active[0].Kind != "Job" || st.Active[0].UID != j.UID {
		t.Errorf("status.active %+v", st.Active)
	}
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(m) {
		t.Errorf("lastScheduleTime %v, want %v", st.LastScheduleTime, m)
	}
	h.waitEvent("life", "SuccessfulCreate", "Created job "+name)

	// Half a minute later: nothing new.
	h.step(30 * time.Second)
	if n := len(h.jobsOf(cj)); n != 1 {
		t.Fatalf("%d jobs between schedule times", n)
	}
	h.finish(name, true)
	h.settle()
	st = h.get("life").Status
	if len(st.Active) != 0 || st.LastSuccessfulTime == nil {
		t.Errorf("after completion: active %v lastSuccessfulTime %v", st.Active, st.LastSuccessfulTime)
	}
	h.waitEvent("life", "SawCompletedJob", fmt.Sprintf("Saw completed job: %s, condition: Complete", name))

	m2 := h.toNextMinute()
	if n := len(h.jobsOf(cj)); n != 2 {
		t.Fatalf("%d jobs after the second schedule time, want 2", n)
	}
	if lst := h.get("life").Status.LastScheduleTime; lst == nil || !lst.Time.Equal(m2) {
		t.Errorf("lastScheduleTime %v, want %v", lst, m2)
	}
	if got := testutilCount(t, h); got < 2 {
		t.Errorf("cronjob_controller_job_creation_skew_duration_seconds count %d, want >= 2", got)
	}
}

func jobNames(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

// testutilCount reads the creation skew histogram's sample count from the
// manager's registry.
func testutilCount(t *testing.T, h *harness) uint64 {
	t.Helper()
	mfs, err := h.mgr.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "cronjob_controller_job_creation_skew_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

// testForbid: while a Job runs, a schedule time passes without a new Job
// (JobAlreadyActive); once it finishes, the missed time starts late.
func testForbid(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("forbid", "* * * * *")
	c.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
	cj := h.create(c)
	m1 := h.toNextMinute()
	m2 := h.toNextMinute()
	jobs := h.jobsOf(cj)
	if len(jobs) != 1 || jobs[0].Name != jobName(cj, m1) {
		t.Fatalf("jobs %v, want only %s", jobNames(jobs), jobName(cj, m1))
	}
	h.waitEvent("forbid", "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
	h.finish(jobName(cj, m1), false)
	h.settle()
	jobs = h.jobsOf(cj)
	if len(jobs) != 2 {
		t.Fatalf("jobs %v after the first failed, want the late start of %s", jobNames(jobs), jobName(cj, m2))
	}
	st := h.get("forbid").Status
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(m2) || len(st.Active) != 1 || st.Active[0].Name != jobName(cj, m2) {
		t.Errorf("status %+v", st)
	}
	if st.LastSuccessfulTime != nil {
		t.Errorf("lastSuccessfulTime %v after a failed job", st.LastSuccessfulTime)
	}
}

// testReplace: at the next schedule time the running Job is deleted and
// the new one created.
func testReplace(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("replace", "* * * * *")
	c.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
	cj := h.create(c)
	m1 := h.toNextMinute()
	m2 := h.toNextMinute()
	h.eventually("replaced", func() error {
		jobs := h.jobsOf(cj)
		if len(jobs) != 1 || jobs[0].Name != jobName(cj, m2) {
			return fmt.Errorf("jobs %v", jobNames(jobs))
		}
		return nil
	})
	h.waitEvent("replace", "SuccessfulDelete", "Deleted job "+jobName(cj, m1))
	st := h.get("replace").Status
	if len(st.Active) != 1 || st.Active[0].Name != jobName(cj, m2) {
		t.Errorf("active %+v", st.Active)
	}
}

// testAllowOverlaps: under Allow, Jobs overlap.
func testAllowOverlaps(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	cj := h.create(newCronJob("allow", "* * * * *"))
	h.toNextMinute()
	h.toNextMinute()
	if n := len(h.get("allow").Status.Active); n != 2 {
		t.Fatalf("%d active, want 2", n)
	}
	if n := len(h.jobsOf(cj)); n != 2 {
		t.Fatalf("%d jobs, want 2", n)
	}
}

// testHistoryLimits: the oldest finished Jobs beyond each limit are
// deleted.
func testHistoryLimits(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("hist", "* * * * *")
	c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit = ptr.To[int32](2), ptr.To[int32](1)
	cj := h.create(c)
	var names []string
	for i := range 6 {
		m := h.toNextMinute()
		names = append(names, jobName(cj, m))
		h.finish(jobName(cj, m), i%2 == 0) // complete, failed, complete, ...
		h.settle()
	}
	h.eventually("history kept", func() error {
		got := map[string]bool{}
		for _, j := range h.jobsOf(cj) {
			got[j.Name] = true
		}
		// Complete: 0, 2, 4 -> keep 2, 4. Failed: 1, 3, 5 -> keep 5.
		want := map[string]bool{names[2]: true, names[4]: true, names[5]: true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("jobs %v, want %v", got, want)
		}
		return nil
	})
	h.waitEvent("hist", "SuccessfulDelete", "Deleted job "+names[0])
}

// testSuspend: a suspended CronJob starts nothing; resumed, it starts the
// most recent missed time only.
func testSuspend(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("susp", "* * * * *")
	c.Spec.Suspend = ptr.To(true)
	cj := h.create(c)
	h.toNextMinute()
	h.toNextMinute()
	m := h.toNextMinute()
	if n := len(h.jobsOf(cj)); n != 0 {
		t.Fatalf("%d jobs while suspended", n)
	}
	h.mutate("susp", func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(false) })
	h.settle()
	jobs := h.jobsOf(cj)
	if len(jobs) != 1 || jobs[0].Name != jobName(cj, m) {
		t.Fatalf("jobs %v after resume, want only %s", jobNames(jobs), jobName(cj, m))
	}
}

// testMissedStarts: after a long gap only the most recent time starts; more
// than 100 missed times warn; a starting deadline shorter than the delay
// since the last time starts nothing.
func testMissedStarts(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	many := h.create(newCronJob("many", "* * * * *"))
	d := newCronJob("deadline", "0 * * * *")
	d.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	deadline := h.create(d)
	h.step(3 * time.Hour)
	now := h.clk.Now()
	jobs := h.jobsOf(many)
	if len(jobs) != 1 || jobs[0].Name != jobName(many, now.Truncate(time.Minute)) {
		t.Fatalf("jobs %v after 3 h, want one for %s", jobNames(jobs), now.Truncate(time.Minute))
	}
	h.waitEvent("many", "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	// The last full hour passed more than 30 s ago (unless the step landed
	// within 30 s of it).
	if now.Sub(now.Truncate(time.Hour)) > 30*time.Second {
		if n := len(h.jobsOf(deadline)); n != 0 {
			t.Fatalf("%d jobs for a start past its deadline", n)
		}
	}
	// The next full hour is met within the deadline.
	hour := now.Truncate(time.Hour).Add(time.Hour)
	h.step(hour.Add(10 * time.Second).Sub(h.clk.Now()))
	jobs = h.jobsOf(deadline)
	if len(jobs) != 1 || jobs[0].Name != jobName(deadline, hour) {
		t.Fatalf("jobs %v, want one for %s", jobNames(jobs), hour)
	}
}

// testTimeZone: spec.timeZone moves the schedule and the annotation
// carries the zone's offset.
func testTimeZone(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("tz", "30 * * * *")
	c.Spec.TimeZone = ptr.To("Asia/Kolkata") // UTC+05:30: :30 there is :00 UTC
	cj := h.create(c)
	hour := h.clk.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	h.step(hour.Add(-20 * time.Second).Sub(h.clk.Now()))
	if n := len(h.jobsOf(cj)); n != 0 {
		t.Fatalf("%d jobs before the hour", n)
	}
	h.step(30 * time.Second)
	jobs := h.jobsOf(cj)
	if len(jobs) != 1 || jobs[0].Name != jobName(cj, hour) {
		t.Fatalf("jobs %v, want one for %s", jobNames(jobs), hour)
	}
	loc, _ := time.LoadLocation("Asia/Kolkata")
	if got, want := jobs[0].Annotations[batchv1.CronJobScheduledTimestampAnnotation], hour.In(loc).Format(time.RFC3339); got != want {
		t.Errorf("annotation %q, want %q", got, want)
	}
}

// testUnexpectedAndMissingJobs: a Job made by hand from the CronJob (what
// kubectl create job --from=cronjob/x posts) is reported, not tracked; an
// active Job deleted by someone else leaves status.active.
func testUnexpectedAndMissingJobs(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	cj := h.create(newCronJob("odd", "* * * * *"))
	manual := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "odd-manual", Annotations: map[string]string{"cronjob.kubernetes.io/instantiate": "manual"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronJobGVK)}},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if _, err := h.jobs.Create(context.Background(), manual, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitEvent("odd", "UnexpectedJob", "Saw a job that the controller did not create or forgot: odd-manual")
	m := h.toNextMinute()
	if active := h.get("odd").Status.Active; len(active) != 1 || active[0].Name != jobName(cj, m) {
		t.Fatalf("active %+v", active)
	}
	bg := metav1.DeletePropagationBackground
	if err := h.jobs.Delete(context.Background(), jobName(cj, m), metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	h.eventually("active emptied", func() error {
		if a := h.get("odd").Status.Active; len(a) != 0 {
			return fmt.Errorf("active %+v", a)
		}
		return nil
	})
}

// testInvalidSchedule: a schedule that parses but never fires (February
// 31st) is reported and starts nothing.
func testInvalidSchedule(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	cj := h.create(newCronJob("never", "59 23 31 2 *"))
	h.toNextMinute()
	h.waitEvent("never", "InvalidSchedule", "invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second")
	if n := len(h.jobsOf(cj)); n != 0 {
		t.Fatalf("%d jobs", n)
	}
}

// testLostStatusWrite: a Job the controller made (its name and
// scheduled-timestamp annotation) but never recorded, as after a lost
// status write, is tracked again, so Forbid does not start another.
func testLostStatusWrite(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	c := newCronJob("lost", "* * * * *")
	c.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
	c.Spec.Suspend = ptr.To(true)
	cj := h.create(c)
	m := h.toNextMinute()
	orphan, err := jobFor(cj, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.jobs.Create(context.Background(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitEvent("lost", "UnexpectedJob", "Saw a job that the controller did not create or forgot: "+orphan.Name)
	h.mutate("lost", func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(false) })
	h.settle()
	h.toNextMinute()
	jobs := h.jobsOf(cj)
	if len(jobs) != 1 || jobs[0].Name != orphan.Name {
		t.Fatalf("jobs %v, want only the recovered %s", jobNames(jobs), orphan.Name)
	}
	st := h.get("lost").Status
	if len(st.Active) != 1 || st.Active[0].Name != orphan.Name || st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(m) {
		t.Errorf("status %+v", st)
	}
	h.waitEvent("lost", "JobAlreadyActive", "")
}
