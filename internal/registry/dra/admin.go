package dra

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// adminNamespaceLabel must be "true" on the namespace of a claim (or
// template) that requests admin access to devices.
const adminNamespaceLabel = "resource.kubernetes.io/admin-access"

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// adminCheck is what admitAdminAccess needs of a kind: the requests of an
// object (ok false for an object of another type) and its validation.
type adminCheck struct {
	kind     string
	requests func(obj runtime.Object) (reqs []resourcev1.DeviceRequest, ok bool)
	validate func(obj runtime.Object) field.ErrorList
}

// admitAdminAccess refuses, on create, a claim or template asking for
// admin access in a namespace without the admin label, together with the
// errors of the kind's own validation, as kube-apiserver reports both.
func admitAdminAccess(c adminCheck) registry.AdmitFunc {
	return func(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
		if a.Operation != registry.Create || a.Subresource != "" {
			return nil, nil
		}
		reqs, ok := c.requests(a.Object)
		if !ok {
			return nil, nil
		}
		var path *field.Path
		for i, r := range reqs {
			if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
				// kube-apiserver names the field so for templates too.
				path = field.NewPath("spec", "devices", "requests").Index(i).Child("adminAccess")
				break
			}
		}
		if path == nil {
			return nil, nil
		}
		var denied *field.Error
		if ns, err := env.Objects(namespacesGVR).Get(ctx, "", a.Namespace); err != nil {
			denied = field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))
		} else if n, ok := ns.(*corev1.Namespace); !ok || n.Labels[adminNamespaceLabel] != "true" {
			denied = field.Forbidden(path, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", adminNamespaceLabel))
		}
		if denied == nil {
			return nil, nil
		}
		errs := append(field.ErrorList{denied}, c.validate(a.Object)...)
		return nil, apierrors.NewInvalid(resourcev1.SchemeGroupVersion.WithKind(c.kind).GroupKind(), a.Name, errs)
	}
}
