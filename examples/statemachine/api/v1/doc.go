// Package v1 holds the Go types of demo.setpoint.dev/v1 Database, the
// custom resource of the state-machine example, written by hand as a user
// of setpoint writes them: plain structs with JSON tags, DeepCopy methods
// (no code generation) and AddToScheme, which registers Database and
// DatabaseList so that a manager maps the type to its kind.
//
// The types mirror the CRD's schema (package statemachine embeds it):
// every field here exists there with the same name and type, and status is
// written only through the status subresource. Invariants of the values
// the controller writes are documented on the fields.
package v1
