package storageobjectinuseprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "StorageObjectInUseProtection"

// The finalizers the plugin adds.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// Plugin is StorageObjectInUseProtection (mutating).
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit adds the protection finalizer to a new claim or volume.
func (Plugin) Admit(_ context.Context, _ registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Operation != registry.Create {
		return nil, nil
	}
	switch obj := a.Object.(type) {
	case *corev1.PersistentVolumeClaim:
		if admission.Is(a, "", "persistentvolumeclaims") {
			obj.Finalizers = addFinalizer(obj.Finalizers, PVCProtectionFinalizer)
		}
	case *corev1.PersistentVolume:
		if admission.Is(a, "", "persistentvolumes") {
			obj.Finalizers = addFinalizer(obj.Finalizers, PVProtectionFinalizer)
		}
	}
	return nil, nil
}

// addFinalizer appends f to fins unless present.
func addFinalizer(fins []string, f string) []string {
	if slices.Contains(fins, f) {
		return fins
	}
	return append(fins, f)
}
