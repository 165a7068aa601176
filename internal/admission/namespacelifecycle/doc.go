// Package namespacelifecycle is the NamespaceLifecycle admission plugin,
// after Kubernetes' (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle):
//
//   - the namespaces default, kube-system and kube-public cannot be
//     deleted (403 "this namespace may not be deleted");
//   - a namespaced object cannot be created in a namespace that does not
//     exist (404 namespaces "x" not found) or is being deleted (403
//     "unable to create new content in namespace x because it is being
//     terminated", cause NamespaceTerminating on metadata.namespace).
//
// The namespace is read from the server's watch cache, and from storage
// when the cache does not hold it yet (a namespace created a moment ago),
// as kube's plugin reads its informer and then the API.
package namespacelifecycle
