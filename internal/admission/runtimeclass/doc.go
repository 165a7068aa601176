// Package runtimeclass is the RuntimeClass admission plugin, after
// Kubernetes' plugin/pkg/admission/runtimeclass. On pod creates (main
// resource only):
//
//   - a pod naming a RuntimeClass that does not exist is refused: 403
//     `pod rejected: RuntimeClass "x" not found`;
//   - the class's overhead.podFixed becomes spec.overhead; a pod that set
//     a different overhead is refused ("pod rejected: Pod's Overhead
//     doesn't match RuntimeClass's defined Overhead"), and so is one that
//     sets an overhead without a class defining one ("pod rejected: Pod
//     Overhead set without corresponding RuntimeClass defined Overhead");
//   - the class's scheduling.nodeSelector is merged into the pod's (a key
//     the pod sets to another value is refused: "conflict:
//     runtimeClass.scheduling.nodeSelector[k] = v; pod.spec.nodeSelector[k]
//     = w") and its tolerations merged with the pod's, keeping of two
//     tolerations the one that tolerates a superset.
//
// The class is read from the watch cache, and from storage when the cache
// does not hold it (yet).
package runtimeclass
