package rest

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authenticationv1alpha1 "k8s.io/api/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/api/authentication/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1alpha1 "k8s.io/api/node/v1alpha1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// schemeBuilders register every group and version of k8s.io/api, the
// CustomResourceDefinition and APIService kinds and the metrics API.
var schemeBuilders = []func(*runtime.Scheme) error{
	admissionregistrationv1.AddToScheme,
	admissionregistrationv1alpha1.AddToScheme,
	admissionregistrationv1beta1.AddToScheme,
	apiserverinternalv1alpha1.AddToScheme,
	appsv1.AddToScheme,
	appsv1beta1.AddToScheme,
	appsv1beta2.AddToScheme,
	authenticationv1.AddToScheme,
	authenticationv1alpha1.AddToScheme,
	authenticationv1beta1.AddToScheme,
	authorizationv1.AddToScheme,
	authorizationv1beta1.AddToScheme,
	autoscalingv1.AddToScheme,
	autoscalingv2.AddToScheme,
	batchv1.AddToScheme,
	batchv1beta1.AddToScheme,
	certificatesv1.AddToScheme,
	certificatesv1alpha1.AddToScheme,
	certificatesv1beta1.AddToScheme,
	coordinationv1.AddToScheme,
	coordinationv1alpha2.AddToScheme,
	coordinationv1beta1.AddToScheme,
	corev1.AddToScheme,
	discoveryv1.AddToScheme,
	discoveryv1beta1.AddToScheme,
	eventsv1.AddToScheme,
	eventsv1beta1.AddToScheme,
	extensionsv1beta1.AddToScheme,
	flowcontrolv1.AddToScheme,
	flowcontrolv1beta1.AddToScheme,
	flowcontrolv1beta2.AddToScheme,
	flowcontrolv1beta3.AddToScheme,
	lifecyclev1alpha1.AddToScheme,
	networkingv1.AddToScheme,
	networkingv1beta1.AddToScheme,
	nodev1.AddToScheme,
	nodev1alpha1.AddToScheme,
	nodev1beta1.AddToScheme,
	policyv1.AddToScheme,
	policyv1beta1.AddToScheme,
	rbacv1.AddToScheme,
	rbacv1alpha1.AddToScheme,
	rbacv1beta1.AddToScheme,
	resourcev1.AddToScheme,
	resourcev1alpha3.AddToScheme,
	resourcev1beta1.AddToScheme,
	resourcev1beta2.AddToScheme,
	schedulingv1.AddToScheme,
	schedulingv1alpha3.AddToScheme,
	schedulingv1beta1.AddToScheme,
	storagev1.AddToScheme,
	storagev1alpha1.AddToScheme,
	storagev1beta1.AddToScheme,
	storagemigrationv1.AddToScheme,
	storagemigrationv1beta1.AddToScheme,
	apiextv1.AddToScheme,
	apiregistrationv1.AddToScheme,
	metricsv1beta1.AddToScheme,
	metav1.AddMetaToScheme,
}

// NewScheme returns a new scheme holding every kind of k8s.io/api (all
// groups and versions), apiextensions.k8s.io/v1, apiregistration.k8s.io/v1,
// metrics.k8s.io/v1beta1 and the meta/v1 kinds. It is the scheme of a
// Client built by New, and the default of manager.Options.Scheme. Add your
// own kinds to it with their AddToScheme and pass it to NewWithScheme (or
// manager.Options.Scheme): the client then encodes, decodes and names the
// kind of your Go types like built-in ones.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range schemeBuilders {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	return s, nil
}

// NewWithScheme is New with the scheme the client encodes and decodes
// with: its Go types are the client's typed kinds, and an object sent
// without apiVersion and kind gets them from it. The client keeps s and
// reads it at every call, so kinds added to s later are known too (add
// them before using the client concurrently: a runtime.Scheme is not safe
// for concurrent writes). A nil s means NewScheme().
func NewWithScheme(cfg *Config, s *runtime.Scheme) (*Client, error) {
	if s == nil {
		var err error
		if s, err = NewScheme(); err != nil {
			return nil, err
		}
	}
	return newClient(cfg, scheme.CodecsFor(s))
}

// Scheme returns the scheme the client encodes and decodes with.
func (c *Client) Scheme() *runtime.Scheme { return c.codecs.Scheme }

// kindOf names the kind of obj from the client's scheme, else, for a
// built-in Go type missing from a scheme of the user's own, from
// NewScheme's (built once, on first need).
func (c *Client) kindOf(obj runtime.Object) (schema.GroupVersionKind, bool) {
	if kinds, _, err := c.codecs.Scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 && !kinds[0].Empty() {
		return kinds[0], true
	}
	c.builtinOnce.Do(func() { c.builtin, _ = NewScheme() })
	if c.builtin == nil {
		return schema.GroupVersionKind{}, false
	}
	if kinds, _, err := c.builtin.ObjectKinds(obj); err == nil && len(kinds) > 0 && !kinds[0].Empty() {
		return kinds[0], true
	}
	return schema.GroupVersionKind{}, false
}
