// Package crdschema owns the pure logic of CustomResourceDefinitions that the
// API server needs to serve custom resources, with no I/O:
//
//   - Compile checks one version's openAPIV3Schema the way Kubernetes checks
//     apiextensions.k8s.io/v1 schemas (allowed keywords, structural schema,
//     list/map extensions, defaults that are pruned and valid) and returns a
//     *Schema. A Schema is immutable after Compile and safe for concurrent use.
//   - Schema.Prune, Schema.Default and Schema.Validate are the request
//     pipeline of a custom resource, in that order: drop unknown fields
//     (reporting their paths for warnings and Strict field validation), apply
//     schema defaults, validate with kube-openapi's validator plus the
//     x-kubernetes-list-type uniqueness rules. Prune and Default mutate the
//     object in place; Validate never mutates it. Objects are JSON values as
//     apimachinery decodes them: map[string]any, []any, string, bool, nil,
//     int64 or float64 (int, int32 and json.Number are accepted too).
//   - Schema.OpenAPI renders the schema as Kubernetes publishes it in
//     /openapi/v3 (package openapi derives the /openapi/v2 form from it).
//   - ValidateCRD, ValidateCRDUpdate and SetCRDDefaults are the
//     CustomResourceDefinition strategy: defaulting and the create/update
//     validation that produces 422 field errors.
//   - Columns evaluates additionalPrinterColumns (a small JSONPath evaluator
//     for the forms kubectl's printer columns use) into meta.k8s.io/v1 Table
//     cells.
//
// Field errors use Kubernetes' paths and messages, so that clients see the
// same 422 bodies as against a real cluster. Things Kubernetes does that this
// package does not: CEL rules (x-kubernetes-validations are rejected by
// Compile with a clear error), conversion webhooks (rejected by ValidateCRD),
// validation ratcheting, and ObjectMeta coercion inside
// x-kubernetes-embedded-resource values (embedded apiVersion, kind and
// metadata are kept as written and not validated beyond the schema).
package crdschema
