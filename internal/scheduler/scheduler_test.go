package scheduler

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pending pod is bound to the Ready node, not to the NotReady one; the
// binding sets PodScheduled=True and a Scheduled event is recorded.
func TestBindsToReadyNode(t *testing.T) {
	e := newEnv(t, Options{})
	e.addNode(readyNode("ready"))
	nr := readyNode("not-ready")
	nr.ready = corev1.ConditionFalse
	e.addNode(nr)
	e.createPod("web")
	if node := e.waitBound("web"); node != "ready" {
		t.Fatalf("bound to %s, want ready", node)
	}
	if c := scheduledCondition(e.getPod("web")); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("PodScheduled = %+v, want True", c)
	}
	e.waitEvent("web", corev1.EventTypeNormal, "Scheduled", "Successfully assigned default/web to ready")
}

// nodeSelector and required node affinity (In, Gt) pick the matching
// node; a pod matching no node is Unschedulable with the affinity reason.
func TestNodeSelectorAndAffinity(t *testing.T) {
	e := newEnv(t, Options{})
	for i, zone := range []string{"a", "b", "c"} {
		n := readyNode("n-" + zone)
		n.labels = map[string]string{"zone": zone, "gen": fmt.Sprint(i + 1)}
		e.addNode(n)
	}
	e.createPod("sel", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} })
	affinity := func(reqs ...corev1.NodeSelectorRequirement) podOpt {
		return func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
		}
	}
	e.createPod("aff", affinity(
		corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "c"}},
		corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpGt, Values: []string{"2"}}))
	e.createPod("none", affinity(
		corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a", "b", "c"}}))

	if n := e.waitBound("sel"); n != "n-b" {
		t.Errorf("nodeSelector pod on %s, want n-b", n)
	}
	if n := e.waitBound("aff"); n != "n-c" {
		t.Errorf("affinity pod on %s, want n-c", n)
	}
	msg := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector." +
		" preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	e.waitUnschedulable("none", msg)
	e.waitEvent("none", corev1.EventTypeWarning, "FailedScheduling", msg)
}

// CPU, memory and pod count exhaust; the message counts each reason, and
// the pods are scheduled once a node is added or a pod is deleted.
func TestCapacityExhausted(t *testing.T) {
	e := newEnv(t, Options{})
	small := nodeSpec{name: "small", cpu: "1", memory: "1Gi", pods: 2, ready: corev1.ConditionTrue}
	e.addNode(small)
	e.createPod("first", requests("600m", "100Mi"))
	if n := e.waitBound("first"); n != "small" {
		t.Fatalf("first on %s", n)
	}
	e.createPod("big-cpu", requests("500m", "100Mi"))
	e.waitUnschedulable("big-cpu", "0/1 nodes are available: 1 Insufficient cpu."+
		" preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
	e.createPod("big-both", requests("3", "2Gi"))
	bigBoth := "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory." +
		" preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	e.waitUnschedulable("big-both", bigBoth)
	e.waitEvent("big-both", corev1.EventTypeWarning, "FailedScheduling", bigBoth)

	// A best-effort pod fills the second pod slot; the next one finds none.
	e.createPod("tiny")
	e.waitBound("tiny")
	e.createPod("tiny2")
	e.waitUnschedulable("tiny2", "0/1 nodes are available: 1 Too many pods."+
		" preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")

	// Deleting "first" frees 600m and a slot: big-cpu or tiny2 fits, not both
	// (one slot); adding a node lets the rest in, except big-both's 2Gi.
	if err := e.pods.Delete(e.ctx, "first", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	e.eventually("one of big-cpu, tiny2 bound after the delete", func() string {
		if c := e.boundCounts(); c["small"] != 2 {
			return fmt.Sprintf("counts %v", c)
		}
		return ""
	})
	e.addNode(nodeSpec{name: "more", cpu: "2", memory: "1Gi", pods: 10, ready: corev1.ConditionTrue})
	e.waitBound("big-cpu")
	e.waitBound("tiny2")
	e.waitUnschedulable("big-both", "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu, 2 Insufficient memory."+
		" preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
}

// Readiness taints keep pods off NotReady and unreachable nodes unless
// tolerated; so do node taints and spec.unschedulable.
func TestTaintsAndUnschedulable(t *testing.T) {
	e := newEnv(t, Options{})
	nr := readyNode("nr")
	nr.ready = corev1.ConditionFalse
	e.addNode(nr)
	un := readyNode("unreach")
	un.ready = corev1.ConditionUnknown
	e.addNode(un)
	cordoned := readyNode("cordoned")
	cordoned.unschedulable = true
	e.addNode(cordoned)
	tainted := readyNode("tainted")
	tainted.taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
	e.addNode(tainted)

	e.createPod("plain")
	e.waitUnschedulable("plain", "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, "+
		"1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "+
		"1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable."+
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")

	e.createPod("db", tolerating(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual,
		Value: "db", Effect: corev1.TaintEffectNoSchedule}))
	if n := e.waitBound("db"); n != "tainted" {
		t.Errorf("db on %s, want tainted", n)
	}
	e.createPod("nr-ok", tolerating(corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}),
		func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "x"} })
	e.waitUnschedulable("nr-ok", "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "+
		"1 node(s) had untolerated taint {dedicated: db}, "+
		"1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable."+
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
	e.createPod("unreach-ok", tolerating(corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoSchedule}), func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"role": "edge"}
	})
	// Label the unreachable node: the update moves unreach-ok out of the
	// unschedulable set.
	n, err := e.nodes.Get(e.ctx, "unreach", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"role": "edge"}
	if _, err := e.nodes.Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("unreach-ok"); n != "unreach" {
		t.Errorf("unreach-ok on %s", n)
	}
	e.createPod("all", tolerating(corev1.Toleration{Operator: corev1.TolerationOpExists}))
	e.waitBound("all") // tolerates everything, the cordon included

	// Uncordoning moves plain onto the node.
	c, err := e.nodes.Get(e.ctx, "cordoned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Unschedulable = false
	if _, err := e.nodes.Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("plain"); n != "cordoned" {
		t.Errorf("plain on %s, want cordoned", n)
	}
}

// 30 pods of one ReplicaSet over 3 identical nodes land 10/10/10.
func TestSpreadsReplicaSet(t *testing.T) {
	e := newEnv(t, Options{})
	for i := range 3 {
		e.addNode(readyNode(fmt.Sprintf("n%d", i)))
	}
	for i := range 30 {
		e.createPod(fmt.Sprintf("rs-%d", i), ownedBy("rs-uid"))
	}
	e.eventually("30 pods spread 10/10/10", func() string {
		c := e.boundCounts()
		if c["n0"] != 10 || c["n1"] != 10 || c["n2"] != 10 {
			return fmt.Sprintf("counts %v", c)
		}
		return ""
	})
}

// 50 pods created in a burst onto 3 nodes of 10 pods each: the assumed
// pods are counted, so exactly 30 bind and 20 are Unschedulable.
func TestBurstNeverOvercommits(t *testing.T) {
	e := newEnv(t, Options{})
	for i := range 3 {
		e.addNode(nodeSpec{name: fmt.Sprintf("n%d", i), cpu: "4", memory: "8Gi", pods: 10, ready: corev1.ConditionTrue})
	}
	for i := range 50 {
		e.createPod(fmt.Sprintf("p-%02d", i), requests("10m", "10Mi"))
	}
	msg := "0/3 nodes are available: 3 Too many pods." +
		" preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	e.eventually("30 bound, 20 unschedulable", func() string {
		l, err := e.pods.List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		per, unsched := map[string]int{}, 0
		for _, p := range l.Items {
			per[p.Spec.NodeName]++
			if c := scheduledCondition(&p); p.Spec.NodeName == "" && c != nil && c.Reason == corev1.PodReasonUnschedulable && c.Message == msg {
				unsched++
			}
		}
		for n, c := range per {
			if n != "" && c > 10 {
				t.Fatalf("node %s overcommitted with %d pods", n, c)
			}
		}
		if per["n0"]+per["n1"]+per["n2"] != 30 || unsched != 20 {
			return fmt.Sprintf("per node %v, %d unschedulable", per, unsched)
		}
		return ""
	})
	e.sched.queue.mu.Lock()
	queued := len(e.sched.queue.pods)
	e.sched.queue.mu.Unlock()
	if queued != 20 {
		t.Errorf("queue holds %d pods, want the 20 unschedulable", queued)
	}
}

// A pending pod that is deleted leaves the queue.
func TestDeletedPendingPodLeavesQueue(t *testing.T) {
	e := newEnv(t, Options{})
	e.createPod("lonely")
	e.waitUnschedulable("lonely", "no nodes available to schedule pods")
	if err := e.pods.Delete(e.ctx, "lonely", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	e.eventually("queue empty", func() string {
		e.sched.queue.mu.Lock()
		defer e.sched.queue.mu.Unlock()
		if n := len(e.sched.queue.pods); n != 0 {
			return fmt.Sprintf("%d pods queued", n)
		}
		return ""
	})
	// A node appearing now schedules nothing (there is nothing left).
	e.addNode(readyNode("late"))
	e.createPod("after")
	e.waitBound("after")
	if c := e.boundCounts(); c["late"] != 1 || len(c) != 1 {
		t.Fatalf("pods %v, want only after on late", c)
	}
}

// Many pods of one owner, created before the scheduler starts, all bind
// and spread evenly over 50 identical nodes; the rate is logged.
func TestManyPodsSpreadEvenly(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 1000 pods")
	}
	e := newServerEnv(t)
	const nodes, pods = 50, 1000
	for i := range nodes {
		e.addNode(readyNode(fmt.Sprintf("n%03d", i)))
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < pods; i += 16 {
				e.createPod(fmt.Sprintf("p-%04d", i), ownedBy("rs-uid"), requests("10m", "10Mi"))
			}
		})
	}
	wg.Wait()
	start := time.Now()
	e.startScheduler(Options{})
	e.eventually("the scheduler sees all pods bound", func() string {
		e.sched.mu.Lock()
		defer e.sched.mu.Unlock()
		confirmed := 0
		for _, p := range e.sched.cache.pods {
			if !p.assumed {
				confirmed++
			}
		}
		if confirmed != pods {
			return fmt.Sprintf("%d confirmed", confirmed)
		}
		return ""
	})
	el := time.Since(start)
	t.Logf("%d pods bound in %v (%.0f pods/s, manager start and informer sync included)", pods, el, pods/el.Seconds())
	e.eventually("all pods bound, 20 per node", func() string {
		c := e.boundCounts()
		if c[""] != 0 {
			return fmt.Sprintf("%d unbound", c[""])
		}
		for n, k := range c {
			if k != pods/nodes {
				return fmt.Sprintf("node %s has %d pods", n, k)
			}
		}
		return ""
	})
}

// A binding the server refuses (the pod was bound meanwhile) forgets the
// assumption: the node it was assumed on is free again, the pod is counted
// where it really is, and a FailedScheduling event says why.
func TestRefusedBindingForgetsAssumption(t *testing.T) {
	e := newEnv(t, Options{})
	e.addNode(readyNode("n1"))
	e.addNode(readyNode("n2"))
	// Another scheduler's pod: this scheduler leaves it alone.
	p := e.createPod("racer", requests("1", "1Gi"), func(p *corev1.Pod) { p.Spec.SchedulerName = "other" })
	s := e.sched
	e.eventually("both nodes in the scheduler's cache", func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.cache.nodes["n1"] == nil || s.cache.nodes["n2"] == nil {
			return "not yet"
		}
		return ""
	})
	// This scheduler assumes the pod on n1 while the other binds it to n2.
	s.mu.Lock()
	assumed := s.cache.assume(p, "n1", demandOf(p))
	s.mu.Unlock()
	if !assumed {
		t.Fatal("assume refused for an unbound pod")
	}
	if err := s.postBinding(e.ctx, p, "n2"); err != nil {
		t.Fatal(err)
	}
	qp := &queuedPod{pod: p, where: inFlight, attempts: 1}
	s.bind(e.ctx, qp, p, "n1", nil)
	e.eventually("racer counted on n2 only", func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		n1, n2 := s.cache.nodes["n1"], s.cache.nodes["n2"]
		if n1 == nil || n2 == nil {
			return "a node left the cache"
		}
		if n1.podCount != 0 || n1.requested.milliCPU != 0 || n2.podCount != 1 || n2.requested.milliCPU != 1000 {
			return fmt.Sprintf("n1 %+v, n2 %+v", n1, n2)
		}
		return ""
	})
	e.waitEvent("racer", corev1.EventTypeWarning, "FailedScheduling", "Binding rejected")
}
