package admission

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// GroupResource is the resource a writes, without subresource (empty when
// a names no resource).
func GroupResource(a *registry.Attributes) schema.GroupResource {
	if a.Resource == nil {
		return schema.GroupResource{}
	}
	return schema.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
}

// Is reports whether a writes the main resource (no subresource) of group
// and resource.
func Is(a *registry.Attributes, group, resource string) bool {
	return a.Subresource == "" && GroupResource(a) == schema.GroupResource{Group: group, Resource: resource}
}

// Name is the name a refusal gives the object: the object's (or the
// request's), or its generateName when the name was generated after the
// phase (registry.Attributes.GeneratedName), else "Unknown", as
// kube-apiserver's admission refusals name it.
func Name(a *registry.Attributes) string {
	if a.GeneratedName && a.Object != nil {
		if m, err := meta.Accessor(a.Object); err == nil && m.GetGenerateName() != "" {
			return m.GetGenerateName()
		}
	}
	if a.Name != "" {
		return a.Name
	}
	if a.Object != nil {
		if m, err := meta.Accessor(a.Object); err == nil {
			if m.GetName() != "" {
				return m.GetName()
			}
			if m.GetGenerateName() != "" {
				return m.GetGenerateName()
			}
		}
	}
	return "Unknown"
}

// Forbidden is a plugin's refusal: 403 Forbidden naming the resource and
// the object, `pods "p" is forbidden: <err>`; an error that is already a
// 403 is returned as is.
func Forbidden(a *registry.Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	return apierrors.NewForbidden(GroupResource(a), Name(a), err)
}
