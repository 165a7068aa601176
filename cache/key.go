package cache

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyFunc derives the store key of an object. Keys must be stable for the
// life of an object: the store finds an object's previous version by key.
type KeyFunc[T any] func(obj T) (string, error)

// IndexFunc computes the values under which an object is filed in one named
// index. An object may be filed under zero, one or several values. A nil or
// empty result means the object is not in that index at all. Duplicate values
// are allowed and are filed once. The indexer keeps the returned slice:
// do not modify it afterwards.
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers names a set of index functions.
type Indexers[T any] map[string]IndexFunc[T]

// NamespaceIndex is the name of the index that the object constructors
// (NewObjectIndexer) install by default; it files an object under its
// namespace. Cluster-scoped objects are filed under "".
const NamespaceIndex = "namespace"

// MetaNamespaceKeyFunc returns "namespace/name" for namespaced objects and
// "name" for cluster-scoped ones. It fails on an object without a name.
func MetaNamespaceKeyFunc[T metav1.Object](obj T) (string, error) {
	name := obj.GetName()
	if name == "" {
		return "", fmt.Errorf("object has no name (namespace %q)", obj.GetNamespace())
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + name, nil
	}
	return name, nil
}

// MetaNamespaceIndexFunc files an object under its namespace.
func MetaNamespaceIndexFunc[T metav1.Object](obj T) ([]string, error) {
	return []string{obj.GetNamespace()}, nil
}

// ObjectKey builds the key MetaNamespaceKeyFunc would produce for an object
// with this namespace and name.
func ObjectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitKey is the inverse of ObjectKey: "ns/name" yields ("ns", "name") and
// "name" yields ("", "name"). Any other shape is an error.
func SplitKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("unexpected key format %q", key)
}
