package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// serviceAccountsResource serves serviceaccounts and their token
// subresource (serviceaccounts/token: TokenRequest, `kubectl create token`).
func serviceAccountsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "serviceaccounts", Kind: "ServiceAccount", ListKind: "ServiceAccountList",
		Singular: "serviceaccount", ShortNames: []string{"sa"}, Namespaced: true,
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		ReturnDeletedObject: true,
		New:                 func() runtime.Object { return &corev1.ServiceAccount{} },
		NewList:             func() runtime.Object { return &corev1.ServiceAccountList{} },
		Strategy: strategy.Typed[*corev1.ServiceAccount]{
			PrepareCreate: cleanSecretReferences,
			PrepareUpdate: func(sa, _ *corev1.ServiceAccount) { cleanSecretReferences(sa) },
			ValidateNew:   validateServiceAccount,
			ValidateChange: func(sa, old *corev1.ServiceAccount) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateServiceAccount(sa)...)
			},
			Warn: serviceAccountWarnings,
		},
		Subresources: []registry.Subresource{tokenSubresource()},
		Attrs:        strategy.Attrs[*corev1.ServiceAccount](true, nil),
		Table:        printers.For("", "ServiceAccount"),
	}
}

// cleanSecretReferences keeps only the name of each secret reference, as
// Kubernetes does: the secrets of a service account are in its namespace.
func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, s := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: s.Name}
	}
}

func validateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return strategy.ValidateMeta(&sa.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
}
