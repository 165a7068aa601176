package scheduler

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func (e *env) priorityClass(name string, value int32, globalDefault bool, policy corev1.PreemptionPolicy) {
	e.t.Helper()
	c, err := rest.New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	pcs := rest.For[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](c,
		schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), false)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault}
	if policy != "" {
		pc.PreemptionPolicy = &policy
	}
	if _, err := pcs.Create(e.ctx, pc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create priority class %s: %v", name, err)
	}
}

func withClass(name string) podOpt {
	return func(p *corev1.Pod) { p.Spec.PriorityClassName = name }
}

// The Priority admission resolves spec.priority from the class, refuses
// an unknown class or a priority that differs from the class's (the pod is
// not stored), and gives the globalDefault class to pods naming none.
func TestPriorityAdmission(t *testing.T) {
	e := newServerEnv(t)
	e.priorityClass("high", 1000, false, "")
	e.priorityClass("never", 500, false, corev1.PreemptNever)
	p := e.createPod("hi", withClass("high"))
	if p.Spec.Priority == nil || *p.Spec.Priority != 1000 || p.Spec.PreemptionPolicy == nil ||
		*p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("priority %v policy %v, want 1000 PreemptLowerPriority", p.Spec.Priority, p.Spec.PreemptionPolicy)
	}
	if p := e.createPod("nv", withClass("never")); *p.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Fatalf("policy %v, want Never", *p.Spec.PreemptionPolicy)
	}
	if p := e.createPod("plain"); p.Spec.Priority == nil || *p.Spec.Priority != 0 || p.Spec.PriorityClassName != "" {
		t.Fatalf("plain pod: priority %v class %q", p.Spec.Priority, p.Spec.PriorityClassName)
	}
	refused := []struct {
		name string
		opt  podOpt
		msg  string
	}{
		{"nope", withClass("nope"), `pods "nope" is forbidden: no PriorityClass with name nope was found`},
		{"wrong", func(p *corev1.Pod) { p.Spec.PriorityClassName = "high"; p.Spec.Priority = new(int32(7)) },
			`pods "wrong" is forbidden: the integer value of priority (7) must not be provided in pod spec; ` +
				`priority admission controller computed 1000 from the given PriorityClass name`},
	}
	for _, c := range refused {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		c.opt(pod)
		_, err := e.pods.Create(e.ctx, pod, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != c.msg {
			t.Errorf("%s: error %v, want 403 %q", c.name, err, c.msg)
		}
		if _, err := e.pods.Get(e.ctx, c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: stored after refusal (get: %v)", c.name, err)
		}
	}
	// The admission reads classes from the watch cache, as kube-apiserver
	// reads an informer: the new default applies once the cache has it.
	e.priorityClass("everyone", 42, true, "")
	e.eventually("pods get the globalDefault class", func() string {
		p := e.createPod("defaulted")
		if err := e.pods.Delete(e.ctx, "defaulted", metav1.DeleteOptions{}); err != nil {
			return err.Error()
		}
		if p.Spec.PriorityClassName != "everyone" || *p.Spec.Priority != 42 {
			return fmt.Sprintf("class %q priority %d", p.Spec.PriorityClassName, *p.Spec.Priority)
		}
		return ""
	})
}

// A high-priority pod that fits nowhere evicts the lowest victims on the
// best node: they get DisruptionTarget and a Preempted event and are
// deleted; the preemptor is nominated there, then bound. A pod with
// preemptionPolicy Never waits.
func TestPreemption(t *testing.T) {
	e := newEnv(t, Options{InitialBackoff: 100 * 1e6, MaxBackoff: 200 * 1e6})
	e.priorityClass("high", 1000, false, "")
	e.priorityClass("mid", 100, false, "")
	// Below high: were it above, it would take the room hi's preemption
	// makes (nominated pods only hold room against pods of no higher
	// priority), as on kube-scheduler.
	e.priorityClass("never", 50, false, corev1.PreemptNever)
	for _, n := range []string{"n1", "n2"} {
		s := zoneNode(n, "")
		s.cpu = "1"
		e.addNode(s)
	}
	grace := func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = new(int64(30)) }
	// n1 holds one mid pod, n2 two low pods: n1's single victim of
	// priority 100 loses to n2's victims of priority 0 (lower highest
	// victim priority wins).
	e.createPod("mid", withClass("mid"), requests("800m", ""), onNode("n1"), grace)
	e.createPod("low-a", requests("400m", ""), onNode("n2"), grace)
	e.createPod("low-b", requests("400m", ""), onNode("n2"), grace)
	for _, n := range []string{"mid", "low-a", "low-b"} {
		e.waitBound(n)
	}
	e.createPod("waits", withClass("never"), requests("500m", ""))
	e.waitUnschedulable("waits", "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")

	hi := e.createPod("hi", withClass("high"), requests("500m", ""))
	// hi needs 500m of n2's 1000m, 800m taken: one victim is enough, the
	// other is given back. The victim is deleted with its grace period:
	// it stays, terminating, with the DisruptionTarget condition, until
	// its node (here the test) removes it.
	var victim string
	e.eventually("a low pod terminating with DisruptionTarget", func() string {
		for _, n := range []string{"low-a", "low-b"} {
			p := e.getPod(n)
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue &&
					c.Reason == corev1.PodReasonPreemptionByScheduler &&
					c.Message == "default-scheduler: preempting to accommodate a higher priority pod" && p.DeletionTimestamp != nil {
					victim = n
					return ""
				}
			}
		}
		return "none yet"
	})
	e.waitEvent(victim, corev1.EventTypeNormal, "Preempted", "Preempted by pod "+string(hi.UID)+" on node n2")
	if p := e.getPod("hi"); p.Status.NominatedNodeName != "n2" || p.Spec.NodeName != "" {
		t.Fatalf("hi: nominated %q, node %q; want nominated n2 while the victim terminates", p.Status.NominatedNodeName, p.Spec.NodeName)
	}
	if err := e.pods.Delete(e.ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("hi"); n != "n2" {
		t.Fatalf("hi on %s, want n2", n)
	}
	for _, n := range []string{"mid", "low-a", "low-b"} {
		if p, err := e.pods.Get(e.ctx, n, metav1.GetOptions{}); n != victim && (err != nil || p.DeletionTimestamp != nil) {
			t.Errorf("%s evicted too (err %v)", n, err)
		}
	}
	if p := e.getPod("waits"); p.Spec.NodeName != "" {
		t.Errorf("waits bound to %s", p.Spec.NodeName)
	}
}

var _ = testserver.Options{}

func (e *env) dumpEvents() {
	l, _ := e.evs.List(e.ctx, metav1.ListOptions{})
	for _, ev := range l.Items {
		e.t.Logf("%s %s %s: %s", ev.InvolvedObject.Name, ev.Type, ev.Reason, ev.Message)
	}
}
