package provisioner

import (
	"context"
	"fmt"
	"github.com/setpoint-dev/setpoint/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

const (
	// DefaultClassName is the default StorageClass installed, kind's name.
	DefaultClassName = "standard"
	// MarkerNamespace and MarkerName locate the ConfigMap recording that
	// the default class was installed once.
	MarkerNamespace = "kube-system"
	MarkerName      = "setpoint-default-storageclass"
)

// DefaultClass is the StorageClass installed in a new cluster.
func DefaultClass(provisioner string) *storagev1.StorageClass {
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	del := corev1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: DefaultClassName, Annotations: map[string]string{volumeutil.AnnDefaultClass: "true"}},
		Provisioner:          provisioner,
		ReclaimPolicy:        &del,
		VolumeBindingMode:    &wait,
		AllowVolumeExpansion: new(true),
	}
}

// installer installs the default class once per cluster, as an addon
// applied at cluster creation: see the package documentation.
// installer installs the default class with c, the manager's own client
// (not the provisioner's identity).
type installer struct {
	p *provisioner
	c *rest.Client
}

// NeedLeaderElection: only the leader installs.
func (i *installer) NeedLeaderElection() bool { return true }

// Start installs the class, retrying until it succeeds or ctx ends.
func (i *installer) Start(ctx context.Context) error {
	for {
		err := i.install(ctx)
		if err == nil {
			return nil
		}
		i.p.log.Error("install the default storage class", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func (i *installer) install(ctx context.Context) error {
	return InstallDefaultClass(ctx, i.c, i.p.name)
}

// InstallDefaultClass installs the default StorageClass of provisioner
// with c, once per cluster (see the package documentation): a cluster
// installer's act, as kind applies its default class, so c needs to create
// StorageClasses and ConfigMaps in kube-system, which kube's policy grants
// no controller.
func InstallDefaultClass(ctx context.Context, c *rest.Client, provisioner string) error {
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true).Namespace(MarkerNamespace)
	_, err := cms.Get(ctx, MarkerName, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil // installed before: whatever became of it is the user's
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read %s/%s: %w", MarkerNamespace, MarkerName, err)
	}
	classes := rest.For[*storagev1.StorageClass, *storagev1.StorageClassList](c, scGVR, false)
	if _, err := classes.Create(ctx, DefaultClass(provisioner), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create storage class %s: %w", DefaultClassName, err)
	}
	marker := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: MarkerName, Namespace: MarkerNamespace},
		Data:       map[string]string{"storageClass": DefaultClassName, "provisioner": provisioner},
	}
	if _, err := cms.Create(ctx, marker, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s/%s: %w", MarkerNamespace, MarkerName, err)
	}
	return nil
}
