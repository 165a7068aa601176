package statefulset

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// maxBatch bounds one slow-start batch of Parallel pod management.
const maxBatch = 500

// plan is one sync's view of a set: the pods it wants by ordinal index
// (index i is ordinal start+i; a pod not yet created has an empty phase),
// and the condemned pods (ordinal outside the range), highest first.
type plan struct {
	set, currentSet, updateSet *appsv1.StatefulSet
	current, update            *appsv1.ControllerRevision
	replicas, condemned        []*corev1.Pod
	firstUnavailable           *corev1.Pod
	monotonic                  bool
	now                        time.Time
}

func newPlan(set, currentSet, updateSet *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, pods []*corev1.Pod, now time.Time) *plan {
	p := &plan{set: set, currentSet: currentSet, updateSet: updateSet, current: current, update: update,
		replicas: make([]*corev1.Pod, replicasOf(set)), monotonic: set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement, now: now}
	start := startOrdinal(set)
	for _, pod := range pods {
		switch {
		case inRange(pod, set):
			p.replicas[ordinalOf(pod)-start] = pod
		case ordinalOf(pod) >= 0:
			p.condemned = append(p.condemned, pod)
		}
	}
	for i := range p.replicas {
		if p.replicas[i] == nil {
			p.replicas[i] = newVersionedPod(currentSet, updateSet, current.Name, update.Name, start+i)
		}
	}
	sort.Slice(p.condemned, func(i, j int) bool { return ordinalOf(p.condemned[i]) > ordinalOf(p.condemned[j]) })
	for _, pod := range p.replicas {
		if p.firstUnavailable == nil && p.unavailable(pod) {
			p.firstUnavailable = pod
		}
	}
	for i := len(p.condemned) - 1; i >= 0 && p.firstUnavailable == nil; i-- {
		if p.unavailable(p.condemned[i]) {
			p.firstUnavailable = p.condemned[i]
		}
	}
	return p
}

func (p *plan) unavailable(pod *corev1.Pod) bool {
	return isUnavailable(pod, p.set.Spec.MinReadySeconds, p.now)
}

func (p *plan) available(pod *corev1.Pod) bool {
	return isAvailable(pod, p.set.Spec.MinReadySeconds, p.now)
}

// manage makes one step toward the set's spec, as Kubernetes' StatefulSet
// control loop: replicas first (recreate terminal pods, create missing
// ones, fix identity and storage), then the claims of condemned pods, then
// scale down, then the rolling update. Under OrderedReady (monotonic) it
// stops at the first pod it must wait for.
func (r *reconciler) manage(ctx context.Context, p *plan) (rolled int, err error) {
	key := keyOf(p.set)
	if stop, err := runForAll(p.replicas, func(i int) (bool, error) { return r.processReplica(ctx, p, i) }, p.monotonic); stop || err != nil {
		return 0, err
	}
	fixClaims := func(i int) (bool, error) {
		if r.claimsMatchPolicy(p.updateSet, p.condemned[i]) {
			return false, nil
		}
		return false, r.updateClaimOwners(ctx, p.updateSet, p.condemned[i])
	}
	if stop, err := runForAll(p.condemned, fixClaims, p.monotonic); stop || err != nil {
		return 0, err
	}
	if stop, err := runForAll(p.condemned, func(i int) (bool, error) { return r.processCondemned(ctx, p, i) }, p.monotonic); stop || err != nil {
		return 0, err
	}
	if p.set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return 0, nil
	}
	r.log.Debug("rolling update", "statefulset", key, "update", p.update.Name)
	return r.rollingUpdate(ctx, p)
}

// processReplica handles replica i; it returns true when a monotonic set
// must stop here.
func (r *reconciler) processReplica(ctx context.Context, p *plan, i int) (bool, error) {
	pod := p.replicas[i]
	if isTerminal(pod) {
		// A failed or succeeded pod is deleted; the next sync recreates it.
		if pod.DeletionTimestamp == nil {
			if err := r.deletePod(ctx, p.set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		if r.podClaimIsStale(p.set, pod) {
			return true, nil
		}
		if err := r.createPod(ctx, p.set, pod); err != nil {
			return true, err
		}
		if p.monotonic {
			return true, nil
		}
		return false, nil // a new pod has nothing more to check
	}
	if isPending(pod) {
		if err := r.createClaims(ctx, p.set, pod); err != nil {
			return true, err
		}
		if !r.claimsMatchPolicy(p.set, pod) {
			if err := r.updateClaimOwners(ctx, p.set, pod); err != nil {
				r.podEvent("update", p.set, pod, err)
				return true, err
			}
		}
	}
	if p.monotonic && (isTerminating(pod) || !isRunningAndReady(pod) || !p.available(pod)) {
		return true, nil
	}
	if identityMatches(p.set, pod) && storageMatches(p.set, pod) && r.claimsMatchPolicy(p.updateSet, pod) {
		return false, nil
	}
	if err := r.updatePod(ctx, p.updateSet, pod.DeepCopy()); err != nil {
		return true, err
	}
	return false, nil
}

// processCondemned scales down condemned pod i (highest ordinal first
// under OrderedReady, after every other pod is available).
func (r *reconciler) processCondemned(ctx context.Context, p *plan, i int) (bool, error) {
	pod := p.condemned[i]
	if isTerminating(pod) {
		return p.monotonic, nil
	}
	if p.monotonic && pod != p.firstUnavailable && (!isRunningAndReady(pod) || !p.available(pod)) {
		return true, nil
	}
	return true, r.deletePod(ctx, p.set, pod)
}

// runForAll runs fn on every index: in order, stopping at the first true
// or error, when monotonic; else in slow-start batches (1, 2, 4, ... up to
// maxBatch) in parallel, stopping after a batch with an error.
func runForAll(pods []*corev1.Pod, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range pods {
			if stop, err := fn(i); stop || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	next := 0
	for batch := min(1, len(pods)); batch > 0; batch = min(2*batch, len(pods)-next, maxBatch) {
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for k := range batch {
			wg.Go(func() { _, errs[k] = fn(next + k) })
		}
		wg.Wait()
		next += batch
		if err := errors.Join(errs...); err != nil {
			return true, err
		}
	}
	return false, nil
}

// maxUnavailable is rollingUpdate.maxUnavailable scaled to the replicas
// (rounded down), at least 1; default 1.
func maxUnavailable(set *appsv1.StatefulSet) (int, error) {
	v := intstr.FromInt32(1)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v = *ru.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, replicasOf(set), false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}

// partition is rollingUpdate.partition (0 by default).
func partition(set *appsv1.StatefulSet) int {
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return int(*ru.Partition)
	}
	return 0
}

// rollingUpdate deletes pods at an old revision, highest ordinal first and
// not below the partition, keeping at most maxUnavailable replicas
// unavailable (MaxUnavailableStatefulSet, on by default in v1.37).
// Deleted pods are recreated at the update revision by later syncs. It
// returns the number of pods it deleted.
func (r *reconciler) rollingUpdate(ctx context.Context, p *plan) (int, error) {
	maxU, err := maxUnavailable(p.set)
	if err != nil {
		return 0, err
	}
	policy := string(p.set.Spec.PodManagementPolicy)
	r.metrics.maxUnavailable.WithLabelValues(p.set.Namespace, p.set.Name, policy).Set(float64(maxU))
	parallel := !p.monotonic
	unavailable, unavailableOld := 0, 0
	for _, pod := range p.replicas {
		if p.unavailable(pod) {
			unavailable++
			if parallel && podRevision(pod) != p.update.Name && !isTerminating(pod) {
				unavailableOld++
			}
		}
	}
	r.metrics.unavailableReplicas.WithLabelValues(p.set.Namespace, p.set.Name, policy).Set(float64(unavailable))
	if unavailable >= maxU && unavailableOld == 0 {
		return 0, nil
	}
	deleted := 0
	old := func(pod *corev1.Pod) bool { return podRevision(pod) != p.update.Name && !isTerminating(pod) }
	minIdx := partition(p.set)
	if parallel {
		// Old pods already unavailable first (they cost no budget), then
		// available ones within the budget.
		for i := len(p.replicas) - 1; i >= minIdx; i-- {
			if pod := p.replicas[i]; old(pod) && !p.available(pod) {
				if err := r.deletePod(ctx, p.set, pod); err != nil {
					return deleted, err
				}
				deleted++
			}
		}
		budget := maxU - unavailable
		for i := len(p.replicas) - 1; i >= minIdx && budget > 0; i-- {
			if pod := p.replicas[i]; old(pod) && !p.unavailable(pod) {
				if err := r.deletePod(ctx, p.set, pod); err != nil {
					return deleted, err
				}
				deleted++
				budget--
			}
		}
		return deleted, nil
	}
	budget := maxU - unavailable
	for i := len(p.replicas) - 1; i >= minIdx && budget > 0; i-- {
		if pod := p.replicas[i]; old(pod) {
			if err := r.deletePod(ctx, p.set, pod); err != nil {
				return deleted, err
			}
			deleted++
			budget--
		}
	}
	return deleted, nil
}
