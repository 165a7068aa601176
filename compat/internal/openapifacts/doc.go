// Package openapifacts extracts, from kube-apiserver's OpenAPI v3
// documents, the facts of the built-in models that setpoint cannot derive
// by reflection because Kubernetes takes them from comments on its Go types
// (+enum, +listType, +listMapKey, +mapType/+structType, +required/+optional,
// +union, +default and the zero-value defaults openapi-gen writes), and
// renders them as a Go data file of package internal/openapi
// (zz_generated_facts.go), which publishes them as kube-apiserver does.
//
// Only facts are carried over: enum values, list and map types, list map
// keys, required properties, unions, defaults, and the group-versions
// listed on the shared meta kinds (DeleteOptions, WatchEvent, ...). No
// description text is copied.
//
// Calling protocol: Extract(docs) with the body of every /openapi/v3
// group-version document of the reference, then Render. The command
// compat/cmd/openapifacts writes the file; the compat suite's
// TestOpenAPIFactsCurrent fails when the file in the repository differs
// from what the running reference yields.
package openapifacts
