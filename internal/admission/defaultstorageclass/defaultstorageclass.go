package defaultstorageclass

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "DefaultStorageClass"

// The annotations that name a claim's class and a default class.
const (
	BetaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
	DefaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	BetaDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

var storageClassesGVR = storagev1.SchemeGroupVersion.WithResource("storageclasses")

// Plugin is DefaultStorageClass (mutating).
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit gives a claim created without a class the default class.
func (Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	c, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || a.Operation != registry.Create || !admission.Is(a, "", "persistentvolumeclaims") {
		return nil, nil
	}
	if c.Spec.StorageClassName != nil {
		return nil, nil
	}
	if _, ok := c.Annotations[BetaStorageClassAnnotation]; ok {
		return nil, nil
	}
	classes := env.Objects(storageClassesGVR)
	if classes == nil {
		return nil, nil
	}
	list, err := classes.List(ctx, "", nil, nil)
	if err != nil {
		return nil, admission.Forbidden(a, err)
	}
	var defaults []metav1.Object
	for _, obj := range list {
		if m, ok := obj.(metav1.Object); ok {
			if ann := m.GetAnnotations(); ann[DefaultClassAnnotation] == "true" || ann[BetaDefaultClassAnnotation] == "true" {
				defaults = append(defaults, m)
			}
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].GetCreationTimestamp().UnixNano(), defaults[j].GetCreationTimestamp().UnixNano()
		if ti == tj {
			return defaults[i].GetName() < defaults[j].GetName()
		}
		return ti > tj
	})
	name := defaults[0].GetName()
	c.Spec.StorageClassName = &name
	return nil, nil
}
