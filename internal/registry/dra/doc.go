// Package dra describes the resource.k8s.io/v1 resources of dynamic
// resource allocation: device classes, device taint rules (with status),
// resource claims (with status), resource claim templates and resource
// slices, with kube-apiserver v1.37's defaults, validation and printers.
// Device selectors are CEL expressions: they are compiled and type-checked
// on write (cel.go), as kube-apiserver does.
//
// The objects are stored and served; no allocation, scheduling or device
// taint eviction acts on them here.
package dra
