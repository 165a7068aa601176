// Package storage describes the storage.k8s.io/v1 resources: storage
// classes, CSI drivers, CSI nodes (with status), CSI storage capacities
// (namespaced), volume attachments (with status) and volume attributes
// classes, with kube-apiserver v1.37's defaults, validation and printers.
// No controller acts on them here: they are stored and served.
//
// The package name clashes with internal/storage: import it with an alias
// (storagereg) where both meet.
package storage
