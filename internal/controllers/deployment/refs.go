package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// controllerOf returns the controller reference among refs, or nil.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// isAppsGroup tells whether apiVersion is of the apps group (any version).
func isAppsGroup(apiVersion string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == appsv1.GroupName
}

// selectorOf converts the Deployment's selector.
func selectorOf(d *appsv1.Deployment) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(d.Spec.Selector)
}
