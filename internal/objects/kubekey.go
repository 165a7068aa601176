package objects

import (
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// kubeResourcePrefixes are the etcd key prefixes kube-apiserver gives the
// built-in resources whose prefix is not their resource name.
var kubeResourcePrefixes = map[string]string{
	"/replicationcontrollers":     "controllers",
	"/endpoints":                  "services/endpoints",
	"/nodes":                      "minions",
	"/services":                   "services/specs",
	"networking.k8s.io/ingresses": "ingress",
	"apiextensions.k8s.io/customresourcedefinitions": "apiextensions.k8s.io/customresourcedefinitions",
	"apiregistration.k8s.io/apiservices":             "apiregistration.k8s.io/apiservices",
}

// kubeStorageKey is the key kube-apiserver stores an object under in etcd,
// which some of its error messages name (a failed uid precondition of an
// update): /registry/<prefix>[/<namespace>]/<name>, the prefix being the
// resource name, the exceptions above, or <group>/<resource> for custom
// resources.
func kubeStorageKey(r *registry.Resource, namespace, name string) string {
	prefix, ok := kubeResourcePrefixes[r.Group+"/"+r.Resource]
	switch {
	case ok:
	case r.Unstructured:
		prefix = r.Group + "/" + r.Resource
	default:
		prefix = r.Resource
	}
	key := "/registry/" + prefix + "/"
	if r.Namespaced {
		key += namespace + "/"
	}
	return key + name
}
