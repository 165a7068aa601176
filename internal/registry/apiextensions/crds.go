package apiextensions

import (
	"slices"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/crdschema"
	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func crdsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
		Singular: "customresourcedefinition", ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		StorageVersion:        "v1beta1",             // kube-apiserver's storage version: discovery's storageVersionHash
		NoUnconditionalUpdate: true,                  // as kube-apiserver: a PUT must name a resourceVersion
		PreconditionFailed:    "precondition failed", // kube-apiserver's CRD storage checks them itself
		New:                   func() runtime.Object { return &apiextv1.CustomResourceDefinition{} },
		NewList:               func() runtime.Object { return &apiextv1.CustomResourceDefinitionList{} },
		Strategy: crdStrategy{strategy.Typed[*apiextv1.CustomResourceDefinition]{
			PrepareCreate: prepareCRDCreate,
			PrepareUpdate: prepareCRDUpdate,
			Defaults:      crdschema.SetCRDDefaults,
			ValidateNew: func(c *apiextv1.CustomResourceDefinition) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, crdschema.ValidateCRD(c)...)
			},
			ValidateChange: func(c, old *apiextv1.CustomResourceDefinition) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				return append(errs, crdschema.ValidateCRDUpdate(c, old)...)
			},
		}},
		Status: strategy.TypedStatus[*apiextv1.CustomResourceDefinition]{
			PrepareUpdate: func(c, old *apiextv1.CustomResourceDefinition) {
				c.Spec = *old.Spec.DeepCopy()
				strategy.ResetMetaForStatus(&c.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(c, old *apiextv1.CustomResourceDefinition) field.ErrorList {
				// The spec is old's; the status must keep a stored version
				// for the storage version and name only versions of spec.
				errs := strategy.ValidateGenericMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				return append(errs, crdschema.ValidateCRDStatus(c)...)
			},
		},
		Attrs: strategy.Attrs[*apiextv1.CustomResourceDefinition](false, nil),
		Table: printers.For("apiextensions.k8s.io", "CustomResourceDefinition"),
	}
}

// crdStrategy adds Kubernetes' deletion rule for CRDs: the deletion takes
// the cleanup finalizer and a Terminating condition, and the API server
// removes the CRD's objects before it lets the CRD go.
type crdStrategy struct {
	strategy.Typed[*apiextv1.CustomResourceDefinition]
}

// PrepareForDelete adds the cleanup finalizer and the Terminating
// condition.
func (crdStrategy) PrepareForDelete(obj runtime.Object) {
	c, ok := obj.(*apiextv1.CustomResourceDefinition)
	if !ok {
		return
	}
	if !slices.Contains(c.Finalizers, crdschema.CleanupFinalizer) {
		c.Finalizers = append(c.Finalizers, crdschema.CleanupFinalizer)
	}
	cond := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
		Reason:             "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"}
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == apiextv1.Terminating {
			c.Status.Conditions[i] = cond
			return
		}
	}
	c.Status.Conditions = append(c.Status.Conditions, cond)
}

// HoldsDeletion is false: the metadata finalizer is what holds a CRD.
func (crdStrategy) HoldsDeletion(runtime.Object) bool { return false }

// prepareCRDCreate resets status to what the API server's CRD controller
// starts from: Established False while it installs the resource, so that
// `kubectl wait --for=condition=Established` right after a create finds a
// condition to wait on rather than none; the storage version is recorded in
// storedVersions, as Kubernetes does on create.
func prepareCRDCreate(c *apiextv1.CustomResourceDefinition) {
	c.Status = apiextv1.CustomResourceDefinitionStatus{Conditions: []apiextv1.CustomResourceDefinitionCondition{{
		Type: apiextv1.Established, Status: apiextv1.ConditionFalse, Reason: "Installing",
		Message: "the custom resource is being installed", LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}}}
	crdschema.RecordStorageVersion(c)
}

// prepareCRDUpdate keeps old's status (the CRD controller owns it) and
// records a new storage version in storedVersions, as Kubernetes' CRD
// strategy does on update.
func prepareCRDUpdate(c, old *apiextv1.CustomResourceDefinition) {
	c.Status = *old.Status.DeepCopy()
	crdschema.RecordStorageVersion(c)
}
