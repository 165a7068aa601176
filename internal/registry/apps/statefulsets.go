package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func statefulSetsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", ListKind: "StatefulSetList",
		Singular: "statefulset", ShortNames: []string{"sts"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.StatefulSet{} },
		NewList: func() runtime.Object { return &appsv1.StatefulSetList{} },
		Strategy: statefulSetStrategy{strategy.Typed[*appsv1.StatefulSet]{
			PrepareCreate: func(s *appsv1.StatefulSet) {
				s.Status = appsv1.StatefulSetStatus{}
				podspec.DropDisabledTemplateFields(&s.Spec.Template, nil)
			},
			PrepareUpdate: func(s, old *appsv1.StatefulSet) {
				s.Status = old.Status
				podspec.DropDisabledTemplateFields(&s.Spec.Template, &old.Spec.Template)
			},
			Defaults:       defaultStatefulSet,
			ValidateNew:    validateStatefulSet,
			ValidateChange: validateStatefulSetUpdate,
			Warn:           statefulSetWarnings,
		}},
		// Kubernetes' status strategy of statefulsets keeps the spec only:
		// labels and annotations written through status are kept.
		Status: strategy.TypedStatus[*appsv1.StatefulSet]{
			PrepareUpdate:  func(s, old *appsv1.StatefulSet) { s.Spec = old.Spec },
			ValidateChange: validateStatefulSetStatusUpdate,
		},
		Scale: strategy.ReplicasScale[*appsv1.StatefulSet]{
			Get: func(s *appsv1.StatefulSet) (*int32, int32, string, error) {
				sel, err := strategy.SelectorString(s.Spec.Selector)
				return s.Spec.Replicas, s.Status.Replicas, sel, err
			},
			Set: func(s *appsv1.StatefulSet, n int32) { s.Spec.Replicas = &n },
		},
		Attrs:           strategy.Attrs[*appsv1.StatefulSet](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("apps", "StatefulSet"),
	}
}

// defaultStatefulSet applies apps/v1's SetDefaults_StatefulSet (with
// MaxUnavailableStatefulSet on, as in 1.37), the pod template's defaults
// and the defaults of the volume claim templates.
func defaultStatefulSet(s *appsv1.StatefulSet) {
	sp := &s.Spec
	if sp.PodManagementPolicy == "" {
		sp.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	us := &sp.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType && us.RollingUpdate != nil {
		if us.RollingUpdate.Partition == nil {
			us.RollingUpdate.Partition = new(int32(0))
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
	}
	if sp.PersistentVolumeClaimRetentionPolicy == nil {
		sp.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	rp := sp.PersistentVolumeClaimRetentionPolicy
	if rp.WhenDeleted == "" {
		rp.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if rp.WhenScaled == "" {
		rp.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if sp.Replicas == nil {
		sp.Replicas = new(int32(1))
	}
	if sp.RevisionHistoryLimit == nil {
		sp.RevisionHistoryLimit = new(int32(10))
	}
	podspec.DefaultPodSpec(&sp.Template.Spec)
	for i := range sp.VolumeClaimTemplates {
		defaultClaimTemplate(&sp.VolumeClaimTemplates[i])
	}
}

// defaultClaimTemplate gives a volume claim template the defaults of a
// PersistentVolumeClaim and the apiVersion and kind apps/v1 writes out.
func defaultClaimTemplate(c *corev1.PersistentVolumeClaim) {
	c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
	if c.Spec.VolumeMode == nil {
		c.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	podspec.RoundResources(c.Spec.Resources.Requests)
	podspec.RoundResources(c.Spec.Resources.Limits)
}

// statefulSetStrategy gives stored statefulsets' claim templates back the
// apiVersion and kind protobuf does not keep (registry.StoredDefaulter).
type statefulSetStrategy struct {
	strategy.Typed[*appsv1.StatefulSet]
}

func (statefulSetStrategy) DefaultStored(obj runtime.Object) {
	if s, ok := obj.(*appsv1.StatefulSet); ok {
		for i := range s.Spec.VolumeClaimTemplates {
			s.Spec.VolumeClaimTemplates[i].APIVersion, s.Spec.VolumeClaimTemplates[i].Kind = "v1", "PersistentVolumeClaim"
		}
	}
}
