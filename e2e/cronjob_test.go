package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// The CronJob's Jobs name a manager of their own (spec.managedBy), so that
// a Job controller leaves them alone and the test finishes them, as the
// Job controller would, by writing their status.
const cronJobManifest = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "*/1 * * * *"
  timeZone: Etc/UTC
  concurrencyPolicy: Forbid
  successfulJobsHistoryLimit: 1
  jobTemplate:
    metadata:
      labels: {app: tick}
    spec:
      managedBy: e2e.setpoint.dev/job-runner
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox
            command: ["true"]
`

// forbidWatch follows the namespace's Jobs and records a violation when
// the CronJob controller creates a Job (one with the scheduled-timestamp
// annotation) while another of its Jobs still runs.
type forbidWatch struct {
	mu         sync.Mutex
	running    map[string]bool
	violations []string
	done       chan struct{}
}

func watchForbid(t *testing.T, c *rest.Client) *forbidWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := jobsOf(c).Namespace("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fw := &forbidWatch{running: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(fw.done)
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || j.Annotations[batchv1.CronJobScheduledTimestampAnnotation] == "" {
				continue
			}
			fw.mu.Lock()
			switch {
			case ev.Type == watch.Deleted || jobDone(j):
				delete(fw.running, j.Name)
			case ev.Type == watch.Added:
				if len(fw.running) > 0 {
					fw.violations = append(fw.violations, fmt.Sprintf("%s created while %v run", j.Name, fw.running))
				}
				fw.running[j.Name] = true
			}
			fw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-fw.done })
	return fw
}

func (fw *forbidWatch) check(t *testing.T) {
	t.Helper()
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if len(fw.violations) > 0 {
		t.Fatalf("Forbid violated: %v", fw.violations)
	}
}

func jobDone(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// completeJob writes the status the Job controller writes when a Job
// succeeds.
func completeJob(t *testing.T, c *rest.Client, name string) {
	t.Helper()
	jobs := jobsOf(c).Namespace("default")
	for range 10 {
		j, err := jobs.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now, started := metav1.Now(), j.CreationTimestamp
		j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &started, &now, 1
		for _, typ := range []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete} {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue,
				Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now})
		}
		if _, err = jobs.UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err == nil {
			return
		}
		t.Logf("complete %s: %v", name, err)
	}
	t.Fatalf("could not complete job %s", name)
}

// describeJobs says of each Job its start time and finished condition.
func describeJobs(jobs map[string]*batchv1.Job) string {
	var out []string
	for name, j := range jobs {
		cond := "running"
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				cond = string(c.Type)
			}
		}
		out = append(out, fmt.Sprintf("%s (started %v, %s, deleting %v)", name, j.Status.StartTime, cond, j.DeletionTimestamp != nil))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// scheduledJobs lists the CronJob controller's Jobs by name.
func scheduledJobs(t *testing.T, c *rest.Client) map[string]*batchv1.Job {
	t.Helper()
	list, err := jobsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*batchv1.Job{}
	for i := range list.Items {
		if j := &list.Items[i]; j.Annotations[batchv1.CronJobScheduledTimestampAnnotation] != "" {
			out[j.Name] = j
		}
	}
	return out
}

func (s *server) waitEventReason(t *testing.T, reason, contains string) {
	t.Helper()
	eventually(t, 90*time.Second, "event "+reason, func() string {
		out := s.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name=tick,reason="+reason,
			"-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
		if strings.Contains(out, contains) {
			return ""
		}
		return fmt.Sprintf("messages %q", out)
	})
}

// TestUpCronJobLife: a CronJob's life through kubectl against `setpoint
// up`: its first Job (the test backdates lastScheduleTime so the controller
// owes one at once instead of at the next minute), a manual Job from it, a
// schedule time skipped under Forbid (again by moving the schedule and
// lastScheduleTime rather than waiting), the late start once the running
// Job completes, the history limit, suspend, and deletion with cascade. A
// watch checks throughout that two scheduled Jobs never run at once.
func TestUpCronJobLife(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 1)
	c := restClient(t, cl.kubeconfig)
	fw := watchForbid(t, c)
	cl.kubectl(t, cronJobManifest, "apply", "-f", "-")
	uid := cl.kubectl(t, "", "get", "cronjob", "tick", "-o", "jsonpath={.metadata.uid}")

	past := time.Now().Add(-3 * time.Minute).UTC().Format(time.RFC3339)
	cl.kubectl(t, "", "patch", "cronjob", "tick", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"lastScheduleTime":%q}}`, past))
	var first *batchv1.Job
	eventually(t, 30*time.Second, "first job", func() string {
		for _, j := range scheduledJobs(t, c) {
			first = j
			return ""
		}
		return "none yet"
	})
	at, err := time.Parse(time.RFC3339, first.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	if err != nil || first.Name != "tick-"+strconv.FormatInt(at.Unix()/60, 10) || at.Second() != 0 {
		t.Fatalf("job %s with scheduled time %v (%v)", first.Name, at, err)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || string(ref.UID) != uid || ref.Kind != "CronJob" || first.Labels["app"] != "tick" {
		t.Fatalf("job %s: controller %+v labels %v", first.Name, ref, first.Labels)
	}
	if got := cl.kubectl(t, "", "get", "cronjob", "tick", "-o", "jsonpath={.status.active[*].name}"); got != first.Name {
		t.Fatalf("status.active %q, want %s", got, first.Name)
	}
	cl.waitEventReason(t, "SuccessfulCreate", "Created job "+first.Name)

	// kubectl create job --from: accepted, owned by the CronJob, reported
	// as unexpected and not tracked.
	cl.kubectl(t, "", "create", "job", "by-hand", "--from=cronjob/tick")
	owner := cl.kubectl(t, "", "get", "job", "by-hand", "-o",
		`jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}/{.metadata.annotations.cronjob\.kubernetes\.io/instantiate}`)
	if owner != "CronJob/"+uid+"/manual" {
		t.Fatalf("by-hand: %q", owner)
	}
	cl.waitEventReason(t, "UnexpectedJob", "Saw a job that the controller did not create or forgot: by-hand")

	// A schedule time falls while the first Job runs: nothing starts. So
	// as not to wait a minute, the schedule moves to an hourly minute two
	// minutes before the first Job's and lastScheduleTime back before that.
	missed := at.Add(-2 * time.Minute)
	cl.kubectl(t, "", "patch", "cronjob", "tick", "--type=merge",
		"-p", fmt.Sprintf(`{"spec":{"schedule":"%d * * * *"}}`, missed.UTC().Minute()))
	cl.kubectl(t, "", "patch", "cronjob", "tick", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"lastScheduleTime":%q}}`, at.Add(-5*time.Minute).UTC().Format(time.RFC3339)))
	cl.waitEventReason(t, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
	if n := len(scheduledJobs(t, c)); n != 1 {
		t.Fatalf("%d scheduled jobs under Forbid with one running", n)
	}
	fw.check(t)

	// Completing it lets the missed time start late. Start times have a
	// resolution of one second and the history limit keeps the Job that
	// started last, the name breaking ties (kube's byJobStartTime): so that
	// the late Job is the one kept, it must start in a later second.
	if d := time.Until(first.CreationTimestamp.Add(time.Second)); d > 0 {
		time.Sleep(d)
	}
	completeJob(t, c, first.Name)
	cl.waitEventReason(t, "SawCompletedJob", "Saw completed job: "+first.Name+", condition: Complete")
	second := "tick-" + strconv.FormatInt(missed.Unix()/60, 10)
	eventually(t, 30*time.Second, "late job "+second, func() string {
		if _, ok := scheduledJobs(t, c)[second]; !ok {
			return fmt.Sprintf("jobs %v", scheduledJobs(t, c))
		}
		return ""
	})
	if got := cl.kubectl(t, "", "get", "cronjob", "tick", "-o", "jsonpath={.status.lastScheduleTime}"); got != missed.UTC().Format(time.RFC3339) {
		t.Errorf("lastScheduleTime %s, want %s", got, missed.UTC().Format(time.RFC3339))
	}
	completeJob(t, c, second)
	// successfulJobsHistoryLimit 1: the first one goes.
	eventually(t, 30*time.Second, "history limit", func() string {
		jobs := scheduledJobs(t, c)
		if _, ok := jobs[first.Name]; ok {
			return "first job still there; jobs: " + describeJobs(jobs) + "; events: " +
				cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.kind=CronJob",
					"-o", "jsonpath={range .items[*]}{.reason}: {.message}; {end}")
		}
		return ""
	})
	cl.waitEventReason(t, "SuccessfulDelete", "Deleted job "+first.Name)
	if got := cl.kubectl(t, "", "get", "cronjob", "tick", "-o", "jsonpath={.status.lastSuccessfulTime}"); got == "" {
		t.Error("no lastSuccessfulTime")
	}

	cl.kubectl(t, "", "patch", "cronjob", "tick", "-p", `{"spec":{"suspend":true}}`)
	if out := cl.kubectl(t, "", "get", "cronjob", "tick"); !strings.Contains(out, "True") {
		t.Errorf("kubectl get cronjob after suspend:\n%s", out)
	}
	fw.check(t)

	// Deleting the CronJob (background cascade) takes its Jobs with it,
	// the manual one included.
	cl.kubectl(t, "", "delete", "cronjob", "tick")
	eventually(t, 60*time.Second, "jobs collected", func() string {
		list, err := jobsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) > 0 {
			return fmt.Sprintf("%d jobs left", len(list.Items))
		}
		return ""
	})
	fw.check(t)
}
