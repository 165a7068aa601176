package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Defaults of Options: Kubernetes' values, but for BindConcurrency, which
// is ours (kube-scheduler is held back by its client's QPS limit): with the
// controllers' and the nodes' writes it keeps a cluster's writers under
// the API server's 200 concurrent mutating requests, past which it answers
// 429 and the writer waits a second.
const (
	DefaultBindConcurrency          = 48
	DefaultInitialBackoff           = 1 * time.Second
	DefaultMaxBackoff               = 10 * time.Second
	DefaultUnschedulableFlushPeriod = 60 * time.Second
	// backoffFlushPeriod is how often pods whose backoff ended are moved
	// to the active queue (kube-scheduler: every second).
	backoffFlushPeriod = time.Second
)

// Options configure the scheduler. The zero value selects the defaults.
type Options struct {
	// SchedulerName selects the pods this scheduler places: those whose
	// spec.schedulerName equals it (default "default-scheduler", which the
	// API server sets on pods that name none).
	SchedulerName string
	// BindConcurrency bounds the API writes in flight: bindings, and the
	// status patches of unschedulable pods (default 48).
	BindConcurrency int
	// InitialBackoff and MaxBackoff bound a pod's backoff after a failed
	// attempt: InitialBackoff doubled per further attempt, at most
	// MaxBackoff (default 1s and 10s).
	InitialBackoff, MaxBackoff time.Duration
	// UnschedulableFlushPeriod is how long an unschedulable pod waits for
	// a cluster change before it is tried again anyway (default 60s);
	// the set is checked every half period.
	UnschedulableFlushPeriod time.Duration
	// Clock drives backoff and flushes (default the real clock).
	Clock clock.WithTicker
}

func (o *Options) setDefaults() {
	if o.SchedulerName == "" {
		o.SchedulerName = corev1.DefaultSchedulerName
	}
	if o.BindConcurrency <= 0 {
		o.BindConcurrency = DefaultBindConcurrency
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = DefaultInitialBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.InitialBackoff)
	if o.UnschedulableFlushPeriod <= 0 {
		o.UnschedulableFlushPeriod = DefaultUnschedulableFlushPeriod
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// Scheduler binds pending pods to nodes. See the package documentation.
type Scheduler struct {
	opts     Options
	log      *slog.Logger
	recorder record.Recorder
	// client posts bindings; pods patches pod status.
	client *rest.Client
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	// podReg, nodeReg, nsReg are the informer registrations Start waits
	// for.
	podReg, nodeReg, nsReg *informer.Registration
	queue                  *schedulingQueue
	// pvcs, pvs and classes are read for volume binding; pdbs for
	// preemption; their informers are shared with the manager.
	pvcs    *informer.Informer[*corev1.PersistentVolumeClaim]
	pvs     *informer.Informer[*corev1.PersistentVolume]
	classes *informer.Informer[*storagev1.StorageClass]
	pdbs    *informer.Informer[*policyv1.PodDisruptionBudget]
	pvcRes  *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pvRes   *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]

	// mu guards cache and feasible: the decision loop and the informer
	// handlers take it; it is never held across an API call.
	mu    sync.Mutex
	cache *schedCache
	// feasible is the decision loop's scratch slice.
	feasible []*nodeInfo
	// namespaces holds the labels of each namespace, for the namespace
	// selectors of pod affinity terms.
	namespaces map[string]labels.Set
	// assumedPVs are the volumes chosen for claims of pods being bound,
	// kept from other pods' choices until the binding ends.
	assumedPVs map[string]bool
	// nominated are the pods that preempted others, by UID: the node they
	// wait for and their demand, counted there for pods of no higher
	// priority.
	nominated map[types.UID]*nomination
	// evicting are the victims of preemptions until the informer shows
	// them gone.
	evicting map[types.UID]bool

	// sem bounds the API writes in flight; writes tracks their goroutines.
	sem    chan struct{}
	writes sync.WaitGroup
}

// Add builds the scheduler on mgr's shared pod and node informers and
// event recorder ("default-scheduler") and registers it as a runnable that
// needs leader election.
func Add(mgr *manager.Manager, opts Options) error {
	s, err := New(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(s)
}

// New builds the scheduler and registers its informer handlers; the caller
// runs Start (Add does it through the manager).
func New(mgr *manager.Manager, opts Options) (*Scheduler, error) {
	opts.setDefaults()
	rec, err := mgr.GetEventRecorderFor(corev1.DefaultSchedulerName)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	s := &Scheduler{
		opts: opts, log: mgr.Logger(), recorder: rec,
		client: mgr.Client(),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](mgr.Client(), corev1.SchemeGroupVersion.WithResource("pods"), true),
		queue:  newSchedulingQueue(opts.Clock, opts.InitialBackoff, opts.MaxBackoff),
		cache:  newSchedCache(), sem: make(chan struct{}, opts.BindConcurrency),
		namespaces: map[string]labels.Set{}, assumedPVs: map[string]bool{}, nominated: map[types.UID]*nomination{},
		evicting: map[types.UID]bool{},
		pvcRes: rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](mgr.Client(),
			corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true),
		pvRes: rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](mgr.Client(),
			corev1.SchemeGroupVersion.WithResource("persistentvolumes"), false),
	}
	if err := s.addInformers(mgr); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	podInf, _, err := manager.Informer[*corev1.Pod](mgr)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	nodeInf, _, err := manager.Informer[*corev1.Node](mgr)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	none := time.Duration(0)
	if s.podReg, err = podInf.AddEventHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { s.onPod(nil, p) },
		UpdateFunc: s.onPod,
		DeleteFunc: func(p *corev1.Pod, _ bool) { s.onPodDelete(p) },
	}, informer.HandlerOptions{Name: "scheduler", ResyncPeriod: &none}); err != nil {
		return nil, fmt.Errorf("scheduler: pod handler: %w", err)
	}
	if s.nodeReg, err = nodeInf.AddEventHandler(informer.HandlerFuncs[*corev1.Node]{
		AddFunc:    func(n *corev1.Node, _ bool) { s.onNode(nil, n) },
		UpdateFunc: s.onNode,
		DeleteFunc: func(n *corev1.Node, _ bool) { s.onNodeDelete(n) },
	}, informer.HandlerOptions{Name: "scheduler", ResyncPeriod: &none}); err != nil {
		return nil, fmt.Errorf("scheduler: node handler: %w", err)
	}
	return s, nil
}

// Start runs the decision loop until ctx ends, once the handlers have seen
// the informers' initial lists (so every bound pod is counted before the
// first decision). It returns after the writes in flight finished.
func (s *Scheduler) Start(ctx context.Context) error {
	if !informer.WaitForCacheSync(ctx, s.podReg.HasSynced, s.nodeReg.HasSynced, s.nsReg.HasSynced,
		s.pvcs.HasSynced, s.pvs.HasSynced, s.classes.HasSynced, s.pdbs.HasSynced) {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Go(func() { s.flushLoop(ctx) })
	bg.Go(func() {
		<-ctx.Done()
		s.queue.close()
	})
	s.log.Info("scheduler started", "bindConcurrency", s.opts.BindConcurrency)
	for {
		qp, pod, d, cycle, ok := s.queue.pop()
		if !ok {
			break
		}
		s.scheduleOne(ctx, qp, pod, d, cycle)
	}
	cancel()
	bg.Wait()
	s.writes.Wait()
	return nil
}

// flushLoop moves pods out of backoff every second and out of the
// unschedulable set every half UnschedulableFlushPeriod.
func (s *Scheduler) flushLoop(ctx context.Context) {
	backoff := s.opts.Clock.NewTicker(backoffFlushPeriod)
	defer backoff.Stop()
	unsched := s.opts.Clock.NewTicker(max(s.opts.UnschedulableFlushPeriod/2, time.Millisecond))
	defer unsched.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-backoff.C():
			s.queue.flushBackoff()
		case <-unsched.C():
			s.queue.flushUnschedulable(s.opts.UnschedulableFlushPeriod)
		}
	}
}

// scheduleOne decides for one popped pod: assume it on the chosen node and
// bind it in the background, or requeue it as unschedulable and report why.
func (s *Scheduler) scheduleOne(ctx context.Context, qp *queuedPod, pod *corev1.Pod, d podDemand, cycle int64) {
	if pod.DeletionTimestamp != nil {
		s.queue.done(qp)
		return
	}
	s.mu.Lock()
	if _, placed := s.cache.pods[pod.UID]; placed {
		// Bound meanwhile (by another scheduler): nothing to decide.
		s.mu.Unlock()
		s.queue.done(qp)
		return
	}
	node, cy, fitErr := s.selectNode(pod, &d)
	var vb *volumeBinding
	if fitErr == nil {
		vb = s.assumeVolumes(cy, node)
		s.cache.assume(pod, node, d)
		delete(s.nominated, pod.UID)
	}
	var pr *preemption
	nominated := pod.Status.NominatedNodeName
	if fitErr != nil && fitErr.numNodes > 0 {
		pr, nominated = s.preempt(cy, fitErr)
	}
	s.mu.Unlock()
	if fitErr != nil {
		s.queue.requeueUnschedulable(qp, cycle)
		s.reportUnschedulable(ctx, pod, fitErr, nominated)
		if pr != nil {
			s.write(ctx, func() { s.executePreemption(ctx, pod, pr) })
		}
		return
	}
	s.write(ctx, func() { s.bind(ctx, qp, pod, node, vb) })
}

// write runs fn in a goroutine once fewer than BindConcurrency writes are
// in flight; it waits for a slot (or the end of ctx, then fn runs at once:
// a cancelled write fails fast and its failure path still runs).
func (s *Scheduler) write(ctx context.Context, fn func()) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		fn()
		return
	}
	s.writes.Go(func() {
		defer func() { <-s.sem }()
		fn()
	})
}
