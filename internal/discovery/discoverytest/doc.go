// Package discoverytest holds resource descriptors for the tests of the
// discovery and openapi packages: a small, fixed set of built-in kinds that
// covers every shape those packages must handle (namespaced and
// cluster-scoped kinds, several groups, status, scale and binding
// subresources, short names and categories).
//
// The descriptors carry no strategies: discovery and OpenAPI only read the
// naming fields and the New/NewList constructors.
package discoverytest
