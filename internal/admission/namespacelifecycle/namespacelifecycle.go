package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "NamespaceLifecycle"

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// immortal namespaces cannot be deleted, as in Kubernetes.
var immortal = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// Plugin is NamespaceLifecycle (a mutating plugin, as in kube-apiserver).
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit refuses deleting a system namespace and creating content in a
// missing or terminating namespace.
func (Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Resource == nil {
		return nil, nil
	}
	if a.Operation == registry.Delete && admission.Is(a, "", "namespaces") && immortal[a.Name] {
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Operation != registry.Create || !a.Resource.Namespaced || a.Namespace == "" {
		return nil, nil
	}
	ns, err := namespace(ctx, env, a.Namespace)
	if err != nil || ns == nil {
		return nil, err
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		e := apierrors.NewForbidden(admission.GroupResource(a), admission.Name(a),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace), Field: "metadata.namespace",
		})
		return nil, e
	}
	return nil, nil
}

// namespace returns the namespace name (404 when it does not exist; nil
// when the server serves no namespaces).
func namespace(ctx context.Context, env registry.Env, name string) (*corev1.Namespace, error) {
	objs := env.Objects(namespacesGVR)
	if objs == nil {
		return nil, nil
	}
	obj, err := registry.GetCached(ctx, objs, "", name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		}
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("namespace %s: unexpected %T", name, obj))
	}
	return ns, nil
}
