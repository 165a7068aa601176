package scheduler

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// The messages of DefaultPreemption, kube-scheduler's.
const (
	preemptNever       = "not eligible due to preemptionPolicy=Never."
	preemptTerminating = "not eligible due to a terminating pod on the nominated node."
	preemptNoVictims   = "No preemption victims found for incoming pod"
	preemptNotHelpful  = "Preemption is not helpful for scheduling"
)

// nomination is a pod that preempted others and waits for its node: it is
// counted there for the pods of no higher priority.
type nomination struct {
	node     string
	pod      *corev1.Pod
	demand   podDemand
	priority int32
}

// preemption is the outcome of a successful dry run: the node and the
// victims to evict there.
type preemption struct {
	node    string
	victims []*corev1.Pod
}

// candidate is one node where evicting victims lets the pod fit.
type candidate struct {
	node          *nodeInfo
	victims       []*corev1.Pod
	pdbViolations int
}

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// preempt is DefaultPreemption's PostFilter, run with the mutex held for a
// pod that fits no node: on each node refused for a reason preemption may
// resolve, it removes the pods of lower priority, and if the pod then fits,
// gives back as many as it can (highest priority first, those whose
// eviction would violate a disruption budget before the others). The best
// candidate is chosen as kube-scheduler chooses it. Without candidate, the
// outcome is written in fe.postFilter.
//
// The nomination to report is the chosen node; or, when preemption was not
// tried (policy Never, victims still terminating), the pod's current one;
// or none when no node would do.
func (s *Scheduler) preempt(cy *cycle, fe *fitError) (*preemption, string) {
	pod := cy.pod
	current := pod.Status.NominatedNodeName
	if nm := s.nominated[pod.UID]; nm != nil {
		current = nm.node
	}
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		fe.postFilter = "preemption: " + preemptNever
		return nil, current
	}
	if s.terminatingOnNominated(pod, fe) {
		fe.postFilter = "preemption: " + preemptTerminating
		return nil, current
	}
	statuses := &fitError{numNodes: fe.numNodes, reasons: map[string]int{}}
	var cands []candidate
	pdbs := s.budgets()
	for _, n := range fe.potential {
		c, reasons := s.dryRun(cy, n, pdbs)
		if c != nil {
			cands = append(cands, *c)
			continue
		}
		for _, r := range reasons {
			statuses.reasons[r]++
		}
	}
	if len(cands) == 0 {
		if absent := fe.numNodes - len(fe.potential); absent > 0 {
			statuses.reasons[preemptNotHelpful] += absent
		}
		fe.postFilter = "preemption: " + statuses.Error()
		delete(s.nominated, pod.UID)
		return nil, ""
	}
	best := pickCandidate(cands)
	s.nominated[pod.UID] = &nomination{node: best.node.node.Name, pod: pod, demand: *cy.d, priority: podPriority(pod)}
	for _, v := range best.victims {
		s.evicting[v.UID] = true
	}
	return &preemption{node: best.node.node.Name, victims: best.victims}, best.node.node.Name
}

// terminatingOnNominated: the pod already preempted on its nominated node
// and a victim there is still terminating (or its eviction is in flight),
// and the node is not refused for good.
func (s *Scheduler) terminatingOnNominated(pod *corev1.Pod, fe *fitError) bool {
	name := pod.Status.NominatedNodeName
	if nm := s.nominated[pod.UID]; nm != nil {
		name = nm.node
	}
	if name == "" {
		return false
	}
	n := s.cache.nodes[name]
	if n == nil || n.node == nil {
		return false
	}
	potential := false
	for _, p := range fe.potential {
		potential = potential || p == n
	}
	if !potential {
		return false
	}
	for _, p := range n.pods {
		if (p.DeletionTimestamp != nil || s.evicting[p.UID]) && podPriority(p) < podPriority(pod) {
			return true
		}
	}
	return false
}

// dryRun simulates preemption on one node: the candidate, or the reasons
// the node stays refused.
func (s *Scheduler) dryRun(cy *cycle, n *nodeInfo, pdbs []*budget) (*candidate, []string) {
	prio := podPriority(cy.pod)
	var victims []*corev1.Pod
	for _, p := range n.pods {
		if podPriority(p) < prio {
			victims = append(victims, p)
		}
	}
	if len(victims) == 0 {
		return nil, []string{preemptNoVictims}
	}
	sim := n.clone()
	what := cy.clone()
	remove := func(p *corev1.Pod) {
		d := s.cache.pods[p.UID].demand
		sim.removePod(p, &d)
		what.update(p, n.node, -1)
	}
	add := func(p *corev1.Pod) {
		d := s.cache.pods[p.UID].demand
		sim.addPod(p, &d)
		what.update(p, n.node, 1)
	}
	for _, p := range victims {
		remove(p)
	}
	if rs, _ := what.filterNode(sim); rs != nil {
		return nil, rs
	}
	sort.Slice(victims, func(i, j int) bool { return moreImportant(victims[i], victims[j]) })
	violating, other := splitByBudget(victims, pdbs)
	c := &candidate{node: n}
	reprieve := func(p *corev1.Pod) bool {
		add(p)
		if rs, _ := what.filterNode(sim); rs != nil {
			remove(p)
			c.victims = append(c.victims, p)
			return false
		}
		return true
	}
	for _, p := range violating {
		if !reprieve(p) {
			c.pdbViolations++
		}
	}
	for _, p := range other {
		reprieve(p)
	}
	sort.Slice(c.victims, func(i, j int) bool { return moreImportant(c.victims[i], c.victims[j]) })
	if len(c.victims) == 0 {
		return nil, []string{preemptNoVictims}
	}
	return c, nil
}

// moreImportant orders pods by priority, then by start time (earlier
// first).
func moreImportant(a, b *corev1.Pod) bool {
	pa, pb := podPriority(a), podPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

func startTime(p *corev1.Pod) *metav1.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime
	}
	return &p.CreationTimestamp
}

// pickCandidate is kube-scheduler's choice: fewest budget violations, then
// the lowest highest victim priority, the lowest sum of priorities, the
// fewest victims, the latest earliest start among the highest-priority
// victims; then the first.
func pickCandidate(cands []candidate) *candidate {
	scores := []func(c *candidate) int64{
		func(c *candidate) int64 { return -int64(c.pdbViolations) },
		func(c *candidate) int64 { return -int64(podPriority(c.victims[0])) },
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.victims {
				sum += int64(podPriority(p)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *candidate) int64 { return -int64(len(c.victims)) },
		func(c *candidate) int64 { return earliestStart(c.victims).UnixNano() },
	}
	left := make([]*candidate, len(cands))
	for i := range cands {
		left[i] = &cands[i]
	}
	for _, f := range scores {
		var kept []*candidate
		best := int64(math.MinInt64)
		for _, c := range left {
			switch sc := f(c); {
			case sc > best:
				best, kept = sc, []*candidate{c}
			case sc == best:
				kept = append(kept, c)
			}
		}
		if left = kept; len(left) == 1 {
			break
		}
	}
	return left[0]
}

// earliestStart is the earliest start among the victims of the highest
// priority.
func earliestStart(victims []*corev1.Pod) *metav1.Time {
	top := podPriority(victims[0])
	var out *metav1.Time
	for _, p := range victims {
		if podPriority(p) != top {
			continue
		}
		if t := startTime(p); out == nil || t.Before(out) {
			out = t
		}
	}
	return out
}

// budget is a disruption budget as preemption reads it.
type budget struct {
	namespace string
	selector  labels.Selector
	allowed   int32
	disrupted map[string]bool
}

// budgets reads the disruption budgets. Called with the mutex held.
func (s *Scheduler) budgets() []*budget {
	list, _ := s.pdbs.Lister().List(nil)
	out := make([]*budget, 0, len(list))
	for _, p := range list {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || p.Spec.Selector == nil {
			continue
		}
		disrupted := map[string]bool{}
		for name := range p.Status.DisruptedPods {
			disrupted[name] = true
		}
		out = append(out, &budget{namespace: p.Namespace, selector: sel, allowed: p.Status.DisruptionsAllowed, disrupted: disrupted})
	}
	return out
}

// splitByBudget sorts victims (in order) into those whose eviction would
// exceed a matching budget's allowed disruptions and the others.
func splitByBudget(victims []*corev1.Pod, pdbs []*budget) (violating, other []*corev1.Pod) {
	allowed := make([]int32, len(pdbs))
	for i, b := range pdbs {
		allowed[i] = b.allowed
	}
	for _, p := range victims {
		violates := false
		for i, b := range pdbs {
			if b.namespace != p.Namespace || b.selector.Empty() || !b.selector.Matches(labels.Set(p.Labels)) ||
				b.disrupted[p.Name] {
				continue
			}
			if allowed[i]--; allowed[i] < 0 {
				violates = true
			}
		}
		if violates {
			violating = append(violating, p)
		} else {
			other = append(other, p)
		}
	}
	return violating, other
}

// forgetNomination drops a pod's nomination (deleted, gated, bound), and
// its eviction if it was a victim.
func (s *Scheduler) forgetNomination(uid types.UID) {
	s.mu.Lock()
	delete(s.nominated, uid)
	delete(s.evicting, uid)
	s.mu.Unlock()
}
