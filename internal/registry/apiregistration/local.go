package apiregistration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// priority orders a group-version in discovery.
type priority struct{ group, version int32 }

// priorities are kube-apiserver v1.37's for the built-in group-versions.
// A group-version without one gets no local APIService, as in
// kube-apiserver (which never registers one it has no priority for).
var priorities = map[schema.GroupVersion]priority{
	{Group: "", Version: "v1"}:                                   {18000, 1},
	{Group: "apps", Version: "v1"}:                               {17800, 15},
	{Group: "events.k8s.io", Version: "v1"}:                      {17750, 15},
	{Group: "events.k8s.io", Version: "v1beta1"}:                 {17750, 5},
	{Group: "authentication.k8s.io", Version: "v1"}:              {17700, 15},
	{Group: "authentication.k8s.io", Version: "v1beta1"}:         {17700, 9},
	{Group: "authentication.k8s.io", Version: "v1alpha1"}:        {17700, 1},
	{Group: "authorization.k8s.io", Version: "v1"}:               {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                        {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                        {17500, 30},
	{Group: "autoscaling", Version: "v2beta1"}:                   {17500, 9},
	{Group: "autoscaling", Version: "v2beta2"}:                   {17500, 1},
	{Group: "batch", Version: "v1"}:                              {17400, 15},
	{Group: "batch", Version: "v1beta1"}:                         {17400, 9},
	{Group: "batch", Version: "v2alpha1"}:                        {17400, 9},
	{Group: "certificates.k8s.io", Version: "v1"}:                {17300, 15},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:           {17300, 9},
	{Group: "certificates.k8s.io", Version: "v1alpha1"}:          {17300, 1},
	{Group: "networking.k8s.io", Version: "v1"}:                  {17200, 15},
	{Group: "networking.k8s.io", Version: "v1beta1"}:             {17200, 9},
	{Group: "policy", Version: "v1"}:                             {17100, 15},
	{Group: "policy", Version: "v1beta1"}:                        {17100, 9},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:          {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:                     {16800, 15},
	{Group: "storage.k8s.io", Version: "v1beta1"}:                {16800, 9},
	{Group: "storage.k8s.io", Version: "v1alpha1"}:               {16800, 1},
	{Group: "apiextensions.k8s.io", Version: "v1"}:               {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}:       {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}:  {16700, 12},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1"}: {16700, 9},
	{Group: "scheduling.k8s.io", Version: "v1"}:                  {16600, 15},
	{Group: "scheduling.k8s.io", Version: "v1beta1"}:             {16600, 9},
	{Group: "scheduling.k8s.io", Version: "v1alpha3"}:            {16600, 3},
	{Group: "coordination.k8s.io", Version: "v1"}:                {16500, 15},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:           {16500, 13},
	{Group: "coordination.k8s.io", Version: "v1alpha2"}:          {16500, 12},
	{Group: "node.k8s.io", Version: "v1"}:                        {16300, 15},
	{Group: "node.k8s.io", Version: "v1alpha1"}:                  {16300, 1},
	{Group: "node.k8s.io", Version: "v1beta1"}:                   {16300, 9},
	{Group: "discovery.k8s.io", Version: "v1"}:                   {16200, 15},
	{Group: "discovery.k8s.io", Version: "v1beta1"}:              {16200, 12},
	{Group: "resource.k8s.io", Version: "v1"}:                    {16200, 21},
	{Group: "resource.k8s.io", Version: "v1beta2"}:               {16200, 15},
	{Group: "resource.k8s.io", Version: "v1beta1"}:               {16200, 9},
	{Group: "resource.k8s.io", Version: "v1alpha3"}:              {16200, 1},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}:       {16100, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"}:  {16100, 18},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2"}:  {16100, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1"}:  {16100, 12},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1alpha1"}: {16100, 9},
	{Group: "internal.apiserver.k8s.io", Version: "v1alpha1"}:    {16000, 9},
	{Group: "storagemigration.k8s.io", Version: "v1"}:            {15800, 15},
	{Group: "storagemigration.k8s.io", Version: "v1beta1"}:       {15800, 9},
	{Group: "lifecycle.k8s.io", Version: "v1alpha1"}:             {15700, 1},
}

// AutomanagedLabel marks the APIServices kube-apiserver manages itself;
// "onstart" ones are created at start.
const AutomanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// localAPIServices returns the local APIService of each served
// group-version kube-apiserver has a priority for.
func localAPIServices(served []schema.GroupVersion) []runtime.Object {
	var out []runtime.Object
	for _, gv := range served {
		p, ok := priorities[gv]
		if !ok {
			continue
		}
		out = append(out, &apiregv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group, Labels: map[string]string{AutomanagedLabel: "onstart"}},
			Spec: apiregv1.APIServiceSpec{Group: gv.Group, Version: gv.Version,
				GroupPriorityMinimum: p.group, VersionPriority: p.version},
		})
	}
	return out
}
