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
//   - Schema.ValidateUpdate and Schema.ValidateStatusUpdate validate updates
//     (the whole object, or status alone for the status subresource) with
//     Kubernetes' validation ratcheting: errors of values equal to their old
//     values are dropped.
//   - Schema.ValidateRules evaluates the x-kubernetes-validations (CEL)
//     rules as Kubernetes' rule validator
//     (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel) does, with
//     its compiled programs (its environment and libraries, cost limits
//     and cel-go's runtime cost tracking): transition rules and
//     optionalOldSelf, ratcheting (as warnings through the context),
//     messages, reasons and field paths, and the runtime cost budget. The
//     walk is this package's own (celtree.go, celeval.go), and so is the
//     adapter of objects and lists (celvalues.go): it answers every method
//     as Kubernetes' (k8s.io/apiserver/pkg/cel/common.UnstructuredToVal)
//     does, reading each node's shape once from celSchema, which resolves
//     each node's children once per compiled Schema, and keeping the
//     values it adapted for the other rules of the node; scalars are
//     still Kubernetes' adapter's. Tests compare the walk with Kubernetes'
//     validator and the values (results and runtime costs) with Kubernetes'
//     adapter.
//     RulesBlocked says when earlier errors keep the rules from running, as
//     in Kubernetes.
//   - Schema.OpenAPI renders the schema as Kubernetes publishes it in
//     /openapi/v3 (package openapi derives the /openapi/v2 form from it).
//   - ValidateCRD, ValidateCRDUpdate and SetCRDDefaults are the
//     CustomResourceDefinition strategy (spec.conversion included: None, or
//     Webhook with its client config and conversionReviewVersions, at the
//     paths of Kubernetes' internal form): defaulting and the create/update
//     validation that produces 422 field errors. Rules are checked as
//     kube-apiserver checks them: their fields, their compilation (new
//     expressions in the environment of the compatibility version, 1.36 for
//     a 1.37 server; expressions the CRD already had in that of stored
//     expressions), their estimated cost (per expression, unless the
//     version's schema is unchanged, and per schema), and defaults against
//     them.
//   - Columns evaluates additionalPrinterColumns (a small JSONPath evaluator
//     for the forms kubectl's printer columns use) into meta.k8s.io/v1 Table
//     cells.
//
// Field errors use Kubernetes' paths and messages, so that clients see the
// same 422 bodies as against a real cluster. Things Kubernetes does that this
// package does not: ObjectMeta coercion inside x-kubernetes-embedded-resource values (embedded
// apiVersion, kind and metadata are kept as written and not validated
// beyond the schema).
package crdschema
