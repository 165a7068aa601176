package persistentvolume

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "persistentvolume-binder"
	// EventSource is the component of the Events it records.
	EventSource = "persistentvolume-controller"
	// DefaultResyncPeriod is how often every claim and volume is synced
	// again (kube-controller-manager's --pvclaimbinder-sync-period).
	DefaultResyncPeriod = 15 * time.Second
)

var (
	pvGVR   = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	scGVR   = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	nodeGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	podGVR  = corev1.SchemeGroupVersion.WithResource("pods")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// ResyncPeriod (default DefaultResyncPeriod).
	ResyncPeriod time.Duration
	// Clock drives the resync; default the manager's clock.
	Clock clock.WithTicker
}

// binder syncs claims (requests with a namespace) and volumes (requests
// without one) with one worker, as kube-controller-manager does: binding
// decisions are taken one at a time on the newest state known.
type binder struct {
	log      *slog.Logger
	pvInf    *informer.Informer[*corev1.PersistentVolume]
	pvcInf   *informer.Informer[*corev1.PersistentVolumeClaim]
	scInf    *informer.Informer[*storagev1.StorageClass]
	nodeInf  *informer.Informer[*corev1.Node]
	podInf   *informer.Informer[*corev1.Pod]
	volumes  *assumed[*corev1.PersistentVolume]
	claims   *assumed[*corev1.PersistentVolumeClaim]
	pvs      *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs     *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	recorder record.Recorder
	metrics  *metrics
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "persistent-volume-binder"

// Add registers the binder on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("persistentvolume: %w", err)
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	copts := mgr.ControllerOptions()
	if opts.Clock == nil {
		opts.Clock = copts.Clock
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return fmt.Errorf("persistentvolume: %w", err)
	}
	b := &binder{
		log:      mgr.Logger().With("controller", ControllerName),
		pvInf:    manager.InformerFor[*corev1.PersistentVolume](mgr, pvGVR, false),
		pvcInf:   manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcGVR, true),
		scInf:    manager.InformerFor[*storagev1.StorageClass](mgr, scGVR, false),
		nodeInf:  manager.InformerFor[*corev1.Node](mgr, nodeGVR, false),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pvs:      rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, pvGVR, false),
		pvcs:     rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcGVR, true),
		recorder: rec,
	}
	b.volumes, b.claims = newAssumed(b.pvInf), newAssumed(b.pvcInf)
	if b.metrics, err = newMetrics(b, mgr.Registry()); err != nil {
		return fmt.Errorf("persistentvolume: metrics: %w", err)
	}
	if err := volumeutil.AddPodClaimIndex(b.podInf.Indexer()); err != nil {
		return fmt.Errorf("persistentvolume: %w", err)
	}
	copts.MaxConcurrentReconciles = 1
	copts.Clock = opts.Clock
	ctrl, err := controller.New(ControllerName, b, copts)
	if err != nil {
		return fmt.Errorf("persistentvolume: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(b.pvcInf, "v1 persistentvolumeclaims", claimRequests),
		controller.Kind(b.pvInf, "v1 persistentvolumes", volumeRequests),
		controller.Kind(b.scInf, "storage.k8s.io/v1 storageclasses", b.classRequests),
		controller.Kind(b.nodeInf, "v1 nodes", func(*corev1.Node) []reconcile.Request { return nil }),
		controller.Kind(b.podInf, "v1 pods", func(*corev1.Pod) []reconcile.Request { return nil }),
		&resync{b: b, period: opts.ResyncPeriod, clock: opts.Clock},
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("persistentvolume: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// claimRequests: a claim, and the volume it names (which learns of the
// claim's deletion or binding).
func claimRequests(c *corev1.PersistentVolumeClaim) []reconcile.Request {
	reqs := []reconcile.Request{claimRequest(c.Namespace, c.Name)}
	if c.Spec.VolumeName != "" {
		reqs = append(reqs, volumeRequest(c.Spec.VolumeName))
	}
	return reqs
}

// volumeRequests: a volume, and the claim its claimRef names.
func volumeRequests(pv *corev1.PersistentVolume) []reconcile.Request {
	reqs := []reconcile.Request{volumeRequest(pv.Name)}
	if r := pv.Spec.ClaimRef; r != nil {
		reqs = append(reqs, claimRequest(r.Namespace, r.Name))
	}
	return reqs
}

// classRequests: the unbound claims of the class, and those without a
// class when it is a default (retroactive default class assignment).
func (b *binder) classRequests(sc *storagev1.StorageClass) []reconcile.Request {
	var reqs []reconcile.Request
	for _, c := range b.pvcInf.Indexer().List() {
		if c.Spec.VolumeName == "" && (volumeutil.ClaimClass(c) == sc.Name || c.Spec.StorageClassName == nil) {
			reqs = append(reqs, claimRequest(c.Namespace, c.Name))
		}
	}
	return reqs
}

func claimRequest(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func volumeRequest(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
}

// Reconcile syncs one claim or volume.
func (b *binder) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Namespace == "" {
		return reconcile.Result{}, b.syncVolume(ctx, req.Name)
	}
	return reconcile.Result{}, b.syncClaim(ctx, req.Namespace+"/"+req.Name)
}

// resync enqueues every claim and volume each period, as
// kube-controller-manager's periodic resync: what no event announces (a
// volume freed elsewhere) is noticed within a period.
type resync struct {
	b      *binder
	period time.Duration
	clock  clock.WithTicker
}

func (r *resync) Start(ctx context.Context, _ string, q handler.Queue) error {
	go func() {
		t := r.clock.NewTicker(r.period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			for _, c := range r.b.pvcInf.Indexer().List() {
				q.Add(claimRequest(c.Namespace, c.Name))
			}
			for _, pv := range r.b.pvInf.Indexer().List() {
				q.Add(volumeRequest(pv.Name))
			}
		}
	}()
	return nil
}

func (r *resync) HasSynced() bool  { return true }
func (r *resync) LastError() error { return nil }
func (r *resync) String() string   { return "periodic resync" }
