// Package apiextensions describes the apiextensions.k8s.io/v1 resource
// customresourcedefinitions: its defaults and validation come from package
// crdschema; a deletion takes the cleanup finalizer and a Terminating
// condition, and the API server's CRD controller removes the CRD's objects
// before it lets the CRD go.
package apiextensions
