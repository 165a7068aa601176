package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// jobManifest is a Job whose pods run for runFor on the simulated nodes
// and exit 0 (the node agent's setpoint.dev/run-time knob: under
// restartPolicy Never the exit ends the pod, Succeeded).
func jobManifest(name string, completions, parallelism int, runFor string, extraSpec string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
spec:
  completions: %d
  parallelism: %d
%s  template:
    metadata:
      annotations:
        setpoint.dev/run-time: %q
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox:1.36
`, name, completions, parallelism, extraSpec, runFor)
}

// jobWatch follows one Job and its pods and records the invariants users
// rely on: never more than parallelism pods running, never more than
// completions succeeded (in the status or among the pods).
type jobWatch struct {
	mu            sync.Mutex
	running       map[types.UID]bool
	succeededPods map[types.UID]bool
	maxRunning    int
	maxSucceeded  int32
	done          chan struct{}
}

func watchJob(t *testing.T, ctx context.Context, c *rest.Client, name string) *jobWatch {
	t.Helper()
	pw, err := podsOf(c).Namespace("default").Watch(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	jw, err := jobsOf(c).Namespace("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	w := &jobWatch{running: map[types.UID]bool{}, succeededPods: map[types.UID]bool{}, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ev := range pw.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			w.mu.Lock()
			w.running[p.UID] = ev.Type != watch.Deleted && p.DeletionTimestamp == nil &&
				p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
			if p.Status.Phase == corev1.PodSucceeded {
				w.succeededPods[p.UID] = true
			}
			n := 0
			for _, r := range w.running {
				if r {
					n++
				}
			}
			w.maxRunning = max(w.maxRunning, n)
			w.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for ev := range jw.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok {
				w.mu.Lock()
				w.maxSucceeded = max(w.maxSucceeded, j.Status.Succeeded)
				w.mu.Unlock()
			}
		}
	}()
	go func() { wg.Wait(); close(w.done) }()
	return w
}

func (w *jobWatch) check(t *testing.T, parallelism int, completions int32) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("watch: at most %d pods running, status succeeded at most %d, %d pods succeeded", w.maxRunning, w.maxSucceeded, len(w.succeededPods))
	if w.maxRunning > parallelism {
		t.Errorf("%d pods running at once, parallelism %d", w.maxRunning, parallelism)
	}
	if w.maxSucceeded > completions || int32(len(w.succeededPods)) > completions {
		t.Errorf("succeeded %d in status, %d pods succeeded; completions %d", w.maxSucceeded, len(w.succeededPods), completions)
	}
}

// TestUpJobLifecycle: kubectl against `setpoint up` runs a Job to
// completion with a watch on its invariants, suspends and resumes one, and
// deletes one with cascade.
func TestUpJobLifecycle(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2)
	c := restClient(t, cl.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	w := watchJob(t, ctx, c, "batch")
	cl.kubectl(t, jobManifest("batch", 6, 2, "1s", ""), "apply", "-f", "-")
	cl.kubectl(t, "", "wait", "--for=condition=complete", "job/batch", "--timeout=60s")
	done, err := jobsOf(c).Namespace("default").Get(ctx, "batch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := done.Status; st.Succeeded != 6 || st.Failed != 0 || st.Active != 0 || st.CompletionTime == nil {
		t.Fatalf("status after completion: %+v", st)
	}
	if ev := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name=batch", "-o", "jsonpath={.items[*].reason}"); !strings.Contains(ev, "Completed") || !strings.Contains(ev, "SuccessfulCreate") {
		t.Errorf("events: %s", ev)
	}

	// Suspended from the start: no pods until resumed.
	cl.kubectl(t, jobManifest("paused", 4, 2, "1s", "  suspend: true\n"), "apply", "-f", "-")
	cl.kubectl(t, "", "wait", "--for=condition=suspended", "job/paused", "--timeout=30s")
	if all, _ := countPods(t, c, "default", "job-name=paused"); all != 0 {
		t.Fatalf("suspended job has %d pods", all)
	}
	cl.kubectl(t, "", "patch", "job", "paused", "--type=merge", "-p", `{"spec":{"suspend":false}}`)
	cl.kubectl(t, "", "wait", "--for=condition=complete", "job/paused", "--timeout=60s")
	if out := cl.kubectl(t, "", "get", "job", "paused", "-o", `jsonpath={.status.conditions[?(@.type=="Suspended")].reason}`); out != "JobResumed" {
		t.Errorf("Suspended condition reason %q, want JobResumed", out)
	}

	// ttlSecondsAfterFinished: the finished Job and its pods are deleted.
	cl.kubectl(t, jobManifest("short-lived", 1, 1, "1s", "  ttlSecondsAfterFinished: 2\n"), "apply", "-f", "-")
	cl.kubectl(t, "", "wait", "--for=condition=complete", "job/short-lived", "--timeout=60s")
	cl.kubectl(t, "", "wait", "--for=delete", "job/short-lived", "--timeout=60s")
	eventually(t, 30*time.Second, "short-lived job's pods deleted", func() string {
		if all, _ := countPods(t, c, "default", "job-name=short-lived"); all != 0 {
			return fmt.Sprintf("%d pods left", all)
		}
		return ""
	})

	// A long-running Job deleted with cascade foreground: pods go first.
	cl.kubectl(t, jobManifest("long", 4, 4, "10m", ""), "apply", "-f", "-")
	eventually(t, 30*time.Second, "long job's pods running", func() string {
		if n := len(runningPods(t, c, "default", "job-name=long")); n != 4 {
			return fmt.Sprintf("%d running", n)
		}
		return ""
	})
	cl.kubectl(t, "", "delete", "job", "long", "--cascade=foreground", "--timeout=60s")
	if all, _ := countPods(t, c, "default", "job-name=long"); all != 0 {
		t.Fatalf("%d pods of the deleted job left", all)
	}
	if _, _, err := cl.kubectlErr(t, "", "get", "job", "long"); err == nil {
		t.Fatal("the deleted job is still there")
	}
	cancel()
	<-w.done
	w.check(t, 2, 6)
}

// TestKill9ControllerManagerDuringJob: the controller manager is killed
// with SIGKILL several times while a Job runs; the Job completes with
// exactly its completions, never more, and every finished pod is counted.
func TestKill9ControllerManagerDuringJob(t *testing.T) {
	t.Parallel()
	api := startUp(t, 3, "--no-controller-manager")
	kc := api.kubeconfig
	cm := startControllerManager(t, kc, 0)
	c := restClient(t, kc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchJob(t, ctx, c, "crunch")
	// Five waves of 3 s pods take at least 15 s, and every outage (the
	// lease of a killed manager runs out after 3 s) holds back the
	// replacements, while the four kills below take about 4 s each: the
	// Job outlasts at least three of them on any machine.
	const completions, parallelism = 24, 5
	api.kubectl(t, jobManifest("crunch", completions, parallelism, "3s", ""), "apply", "-f", "-")
	jobs := jobsOf(c).Namespace("default")
	mid := 0
	for round := 1; round <= 4; round++ {
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		if j, err := jobs.Get(ctx, "crunch", metav1.GetOptions{}); err == nil && j.Status.Succeeded < completions {
			mid++
		}
		cm.kill9()
		cm = startControllerManager(t, kc, round)
	}
	if mid < 3 {
		t.Fatalf("only %d of 4 kills landed while the job ran", mid)
	}
	api.kubectl(t, "", "wait", "--for=condition=complete", "job/crunch", "--timeout=120s")
	j, err := jobs.Get(ctx, "crunch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := j.Status
	t.Logf("after %d kills mid-run: succeeded %d, failed %d", mid, st.Succeeded, st.Failed)
	if st.Succeeded != completions {
		t.Errorf("succeeded %d, want %d", st.Succeeded, completions)
	}
	eventually(t, 30*time.Second, "finished pods counted and released", func() string {
		list, err := podsOf(c).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "job-name=crunch"})
		if err != nil {
			return err.Error()
		}
		succeeded := 0
		for _, p := range list.Items {
			for _, f := range p.Finalizers {
				if f == batchv1.JobTrackingFinalizer {
					return "pod " + p.Name + " keeps the tracking finalizer"
				}
			}
			if p.Status.Phase == corev1.PodSucceeded {
				succeeded++
			}
		}
		if succeeded != completions {
			return fmt.Sprintf("%d succeeded pods, want %d", succeeded, completions)
		}
		return ""
	})
	cancel()
	<-w.done
	w.check(t, parallelism, completions)
	if ev := api.kubectl(t, "", "get", "events", "--field-selector", "reason=TooManySucceededPods", "-o", "name"); ev != "" {
		t.Errorf("TooManySucceededPods: %s", ev)
	}
}
