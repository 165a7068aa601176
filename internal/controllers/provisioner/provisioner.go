package provisioner

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	// DefaultName is the provisioner name of the simulated provisioner,
	// the provisioner field of the classes it serves.
	DefaultName = "setpoint.dev/simulated"
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "simulated-provisioner"
	// DefaultWorkers is the number of concurrent syncs.
	DefaultWorkers = 4
	// VolumeDir is where the simulated volumes' host paths lie.
	VolumeDir = "/var/lib/setpoint/volumes"
	// hostnameLabel is the node label a provisioned volume's node
	// affinity names.
	hostnameLabel = "kubernetes.io/hostname"
)

var (
	pvGVR   = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	scGVR   = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	nodeGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	cmGVR   = corev1.SchemeGroupVersion.WithResource("configmaps")
)

// Options tune the provisioner; the zero value serves DefaultName and
// installs the default class.
type Options struct {
	// Name is the provisioner name served (default DefaultName).
	Name string
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// NoDefaultClass leaves out the installation of the default
	// StorageClass (see the package documentation).
	NoDefaultClass bool
}

type provisioner struct {
	name     string
	log      *slog.Logger
	pvInf    *informer.Informer[*corev1.PersistentVolume]
	pvcInf   *informer.Informer[*corev1.PersistentVolumeClaim]
	scInf    *informer.Informer[*storagev1.StorageClass]
	nodeInf  *informer.Informer[*corev1.Node]
	pvs      *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	recorder record.Recorder
}

// ServiceAccount is the provisioner's identity: the in-tree dynamic
// provisioning of kube-controller-manager ran in the persistent-volume
// binder, whose ServiceAccount and role (create and delete
// PersistentVolumes) it takes (see manager.ClientFor).
const ServiceAccount = "persistent-volume-binder"

// Add registers the provisioner (and, unless told not to, the installer
// of the default class) on mgr; both run while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	p, err := newProvisioner(mgr, opts)
	if err != nil {
		return err
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, p, copts)
	if err != nil {
		return fmt.Errorf("provisioner: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(p.pvcInf, "v1 persistentvolumeclaims", handler.Object[*corev1.PersistentVolumeClaim]()),
		controller.Kind(p.pvInf, "v1 persistentvolumes", func(pv *corev1.PersistentVolume) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: pv.Name}}}
		}),
		controller.Kind(p.scInf, "storage.k8s.io/v1 storageclasses", func(*storagev1.StorageClass) []reconcile.Request { return nil }),
		controller.Kind(p.nodeInf, "v1 nodes", func(*corev1.Node) []reconcile.Request { return nil }),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("provisioner: %w", err)
		}
	}
	if err := mgr.Add(ctrl); err != nil {
		return fmt.Errorf("provisioner: %w", err)
	}
	if opts.NoDefaultClass {
		return nil
	}
	return mgr.Add(&installer{p: p, c: mgr.Client()})
}

// newProvisioner builds the provisioner of opts (defaults set).
func newProvisioner(mgr *manager.Manager, opts Options) (*provisioner, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, fmt.Errorf("provisioner: %w", err)
	}
	// The lib-external-provisioner records as the provisioner name.
	rec, err := mgr.EventRecorderFor(ServiceAccount, opts.Name)
	if err != nil {
		return nil, fmt.Errorf("provisioner: %w", err)
	}
	p := &provisioner{
		name: opts.Name, log: mgr.Logger().With("controller", ControllerName),
		pvInf:    manager.InformerFor[*corev1.PersistentVolume](mgr, pvGVR, false),
		pvcInf:   manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcGVR, true),
		scInf:    manager.InformerFor[*storagev1.StorageClass](mgr, scGVR, false),
		nodeInf:  manager.InformerFor[*corev1.Node](mgr, nodeGVR, false),
		pvs:      rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, pvGVR, false),
		recorder: rec,
	}
	return p, nil
}

// Reconcile provisions for a claim (a request with a namespace) or deletes
// a released volume (a request without one).
func (p *provisioner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Namespace == "" {
		return reconcile.Result{}, p.syncVolume(ctx, req.Name)
	}
	return reconcile.Result{}, p.syncClaim(ctx, req.Namespace+"/"+req.Name)
}

// syncClaim provisions the claim's volume when the binder asked this
// provisioner for one and, for WaitForFirstConsumer, a node is selected.
func (p *provisioner) syncClaim(ctx context.Context, key string) error {
	c, ok, err := p.pvcInf.Indexer().GetByKey(key)
	if err != nil || !ok || c.DeletionTimestamp != nil || c.Spec.VolumeName != "" {
		return err
	}
	if c.Annotations[volumeutil.AnnStorageProvisioner] != p.name && c.Annotations[volumeutil.AnnBetaStorageProvisioner] != p.name {
		return nil
	}
	class, ok, err := p.scInf.Indexer().GetByKey(volumeutil.ClaimClass(c))
	if err != nil || !ok || class.Provisioner != p.name {
		return err
	}
	node := c.Annotations[volumeutil.AnnSelectedNode]
	if volumeutil.IsDelayBinding(class) && node == "" {
		return nil
	}
	name := "pvc-" + string(c.UID)
	if _, exists, _ := p.pvInf.Indexer().GetByKey(name); exists {
		return nil
	}
	if c.Spec.Selector != nil {
		p.recorder.Event(c, corev1.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass \""+class.Name+"\": claim Selector is not supported")
		return nil
	}
	p.recorder.Event(c, corev1.EventTypeNormal, "Provisioning", fmt.Sprintf("External provisioner is provisioning volume for claim %q", key))
	pv := p.volumeFor(c, class, name, node)
	if _, err := p.pvs.Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		p.recorder.Event(c, corev1.EventTypeWarning, "ProvisioningFailed", fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class.Name, err))
		return fmt.Errorf("create volume %s for claim %s: %w", name, key, err)
	}
	p.recorder.Event(c, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume "+name)
	return nil
}

// volumeFor is the volume provisioned for the claim: its size, access
// modes and volume mode; the class's reclaim policy and mount options; a
// claimRef to the claim; a host path, on the selected node when there is
// one.
func (p *provisioner) volumeFor(c *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, name, node string) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{volumeutil.AnnDynamicallyProvisioned: p.name}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage].DeepCopy()},
			AccessModes:                   c.Spec.AccessModes,
			VolumeMode:                    c.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  class.MountOptions,
			StorageClassName:              class.Name,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace,
				Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: VolumeDir + "/" + name, Type: &dirOrCreate}},
		},
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.IsZero() {
		pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("1Gi")
	}
	if node != "" {
		host := node
		if n, ok, _ := p.nodeInf.Indexer().GetByKey(node); ok && n.Labels[hostnameLabel] != "" {
			host = n.Labels[hostnameLabel]
		}
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{host}}},
		}}}}
	}
	return pv
}

// syncVolume deletes a volume this provisioner made once the binder
// released it and its reclaim policy is Delete.
func (p *provisioner) syncVolume(ctx context.Context, name string) error {
	pv, ok, err := p.pvInf.Indexer().GetByKey(name)
	if err != nil || !ok || pv.DeletionTimestamp != nil || pv.Annotations[volumeutil.AnnDynamicallyProvisioned] != p.name ||
		pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return err
	}
	// The simulated backing directory needs no cleanup: deleting the
	// volume object is all.
	err = p.pvs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		p.recorder.Event(pv, corev1.EventTypeWarning, "VolumeFailedDelete", err.Error())
		return fmt.Errorf("delete volume %s: %w", name, err)
	}
	return nil
}
