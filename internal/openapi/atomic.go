package openapi

import (
	"reflect"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// extMapType is how a map or struct merges under server-side apply:
// "atomic" (replaced whole, owned as one field) or "granular".
const extMapType = "x-kubernetes-map-type"

// atomicStructs are the models Kubernetes marks +structType=atomic (as
// kube-apiserver v1.37.2 publishes them): references, selectors, ports.
var atomicStructs = map[string]bool{
	"io.k8s.api.admissionregistration.v1.MatchResources":          true,
	"io.k8s.api.admissionregistration.v1.NamedRuleWithOperations": true,
	"io.k8s.api.admissionregistration.v1.ParamKind":               true,
	"io.k8s.api.admissionregistration.v1.ParamRef":                true,
	"io.k8s.api.admissionregistration.v1.Variable":                true,
	"io.k8s.api.autoscaling.v1.CrossVersionObjectReference":       true,
	"io.k8s.api.core.v1.ConfigMapKeySelector":                     true,
	"io.k8s.api.core.v1.EndpointAddress":                          true,
	"io.k8s.api.core.v1.EndpointPort":                             true,
	"io.k8s.api.core.v1.EvictionResponder":                        true,
	"io.k8s.api.core.v1.FileKeySelector":                          true,
	"io.k8s.api.core.v1.LocalObjectReference":                     true,
	"io.k8s.api.core.v1.NodeSelector":                             true,
	"io.k8s.api.core.v1.NodeSelectorTerm":                         true,
	"io.k8s.api.core.v1.ObjectFieldSelector":                      true,
	"io.k8s.api.core.v1.ObjectReference":                          true,
	"io.k8s.api.core.v1.ResourceFieldSelector":                    true,
	"io.k8s.api.core.v1.ScopeSelector":                            true,
	"io.k8s.api.core.v1.SecretKeySelector":                        true,
	"io.k8s.api.core.v1.SecretReference":                          true,
	"io.k8s.api.core.v1.TopologySelectorTerm":                     true,
	"io.k8s.api.core.v1.TypedLocalObjectReference":                true,
	"io.k8s.api.discovery.v1.EndpointPort":                        true,
	"io.k8s.api.networking.v1.ServiceBackendPort":                 true,
	"io.k8s.api.rbac.v1.RoleRef":                                  true,
	"io.k8s.api.rbac.v1.Subject":                                  true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector":          true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference":         true,
}

// atomicMaps are the map fields Kubernetes marks +mapType=atomic, keyed
// like listFacts ("<declaring model>.<json name>").
var atomicMaps = map[string]bool{
	"io.k8s.api.core.v1.PodSpec.nodeSelector":               true,
	"io.k8s.api.core.v1.ReplicationControllerSpec.selector": true,
	"io.k8s.api.core.v1.ServiceSpec.selector":               true,
	"io.k8s.api.node.v1.Scheduling.nodeSelector":            true,
}

// addStructType marks the schema of an atomic struct.
func addStructType(s *spec.Schema, t reflect.Type) {
	if atomicStructs[ModelName(t)] {
		s.AddExtension(extMapType, "atomic")
	}
}

// addMapType marks an atomic map field (key is "<declaring
// model>.<json name>").
func addMapType(s *spec.Schema, f reflect.StructField, key string) {
	if deref(f.Type).Kind() == reflect.Map && atomicMaps[key] {
		s.AddExtension(extMapType, "atomic")
	}
}
