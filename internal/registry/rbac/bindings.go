package rbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func roleBindingsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "rolebindings", Kind: "RoleBinding", ListKind: "RoleBindingList",
		Singular: "rolebinding", Namespaced: true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &rbacv1.RoleBinding{} },
		NewList:      func() runtime.Object { return &rbacv1.RoleBindingList{} },
		Strategy: strategy.CreateOnUpdate[*rbacv1.RoleBinding]{Typed: strategy.Typed[*rbacv1.RoleBinding]{
			Defaults: func(b *rbacv1.RoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) },
			ValidateNew: func(b *rbacv1.RoleBinding) field.ErrorList {
				return validateBinding(&b.ObjectMeta, nil, b.RoleRef, nil, b.Subjects, nil, true)
			},
			ValidateChange: func(b, old *rbacv1.RoleBinding) field.ErrorList {
				return validateBinding(&b.ObjectMeta, &old.ObjectMeta, b.RoleRef, &old.RoleRef, b.Subjects, old.Subjects, true)
			},
		}},
		Admit: admitRoleBinding,
		Attrs: strategy.Attrs[*rbacv1.RoleBinding](true, nil),
		Table: printers.For(group, "RoleBinding"),
	}
}

func clusterRoleBindingsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "clusterrolebindings", Kind: "ClusterRoleBinding",
		ListKind: "ClusterRoleBindingList", Singular: "clusterrolebinding",
		NoGeneration: true,
		New:          func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
		NewList:      func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		Strategy: strategy.CreateOnUpdate[*rbacv1.ClusterRoleBinding]{Typed: strategy.Typed[*rbacv1.ClusterRoleBinding]{
			Defaults: func(b *rbacv1.ClusterRoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) },
			ValidateNew: func(b *rbacv1.ClusterRoleBinding) field.ErrorList {
				return validateBinding(&b.ObjectMeta, nil, b.RoleRef, nil, b.Subjects, nil, false)
			},
			ValidateChange: func(b, old *rbacv1.ClusterRoleBinding) field.ErrorList {
				return validateBinding(&b.ObjectMeta, &old.ObjectMeta, b.RoleRef, &old.RoleRef, b.Subjects, old.Subjects, false)
			},
		}},
		Admit: admitClusterRoleBinding,
		Attrs: strategy.Attrs[*rbacv1.ClusterRoleBinding](false, nil),
		Table: printers.For(group, "ClusterRoleBinding"),
	}
}

// defaultBinding fills roleRef.apiGroup, and the apiGroup of User and
// Group subjects (rbac.authorization.k8s.io; ServiceAccounts keep "").
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = group
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = group
		}
	}
}

var (
	roleRefPath  = field.NewPath("roleRef")
	subjectsPath = field.NewPath("subjects")
)

// validateBinding checks a binding; old is nil on create. The declarative
// checks of kube-apiserver (subject and roleRef names required) come last,
// on update only for the subjects if they changed and never for a changed
// roleRef, which is reported as immutable instead.
func validateBinding(m, oldMeta *metav1.ObjectMeta, ref rbacv1.RoleRef, oldRef *rbacv1.RoleRef,
	subjects, oldSubjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	refChanged := oldRef != nil && *oldRef != ref
	subjectsDeclarative := oldMeta == nil || !slices.Equal(subjects, oldSubjects)
	var errs, tail field.ErrorList
	if oldMeta == nil {
		errs = metaErrors(m, namespaced)
	} else {
		errs = strategy.ValidateMetaUpdate(m, oldMeta)
	}
	refErrs, refNameMissing := validateRoleRef(ref, namespaced)
	errs = append(errs, refErrs...)
	if refNameMissing != nil && oldMeta != nil {
		// On update the declarative check does not run (a changed roleRef
		// stops at immutability), so the error stays where it is.
		errs = append(errs, refNameMissing)
		refNameMissing = nil
	}
	for i, s := range subjects {
		p := subjectsPath.Index(i)
		if s.Name == "" {
			if subjectsDeclarative {
				tail = append(tail, field.Required(p.Child("name"), ""))
			} else {
				errs = append(errs, field.Required(p.Child("name"), ""))
			}
		}
		errs = append(errs, validateSubject(s, namespaced, p)...)
	}
	if refChanged {
		errs = append(errs, field.Invalid(roleRefPath, internalRoleRef(ref), apivalidation.FieldImmutableErrorMsg))
	}
	if refNameMissing != nil {
		tail = append(tail, refNameMissing)
	}
	return append(errs, tail...)
}

// validateRoleRef checks what a binding grants; a missing name is
// returned apart, for the caller to place.
func validateRoleRef(ref rbacv1.RoleRef, namespaced bool) (field.ErrorList, *field.Error) {
	var errs field.ErrorList
	if ref.APIGroup != group {
		errs = append(errs, field.NotSupported(roleRefPath.Child("apiGroup"), ref.APIGroup, []string{group}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(roleRefPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		return errs, field.Required(roleRefPath.Child("name"), "")
	}
	for _, msg := range validName(ref.Name, false) {
		errs = append(errs, field.Invalid(roleRefPath.Child("name"), ref.Name, msg))
	}
	return errs, nil
}

// validateSubject checks one subject but its missing name (the caller's):
// its kind, a service account's name and namespace, the API group.
func validateSubject(s rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.NameIsDNSSubdomain(s.Name, false) {
				errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != group {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{group}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind,
			[]string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// roleRefValue is a roleRef as kube-apiserver prints it in the
// immutability error: its internal form, whose fields have no JSON names.
type roleRefValue struct {
	APIGroup, Kind, Name string
}

func internalRoleRef(r rbacv1.RoleRef) roleRefValue {
	return roleRefValue{APIGroup: r.APIGroup, Kind: r.Kind, Name: r.Name}
}
