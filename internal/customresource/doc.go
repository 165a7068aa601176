// Package customresource turns a CustomResourceDefinition into the
// registry descriptors of its served versions, so the API server serves a
// custom resource through the same object layer, watch cache and handlers
// as a built-in one.
//
// What it promises, per served version:
//   - Objects are *unstructured.Unstructured. Every version of one CRD
//     shares one storage prefix (/registry/<group>/<plural>/) and is stored
//     at the storage version. With conversion strategy None versions
//     differ only in apiVersion; with Webhook, every descriptor carries the
//     CRD's converter (registry.Resource.Converter, package crconversion),
//     which the object layer calls to read objects stored at another
//     version and to write at the storage version.
//   - Writes run Kubernetes' custom-resource strategy: unknown fields are
//     pruned (Pruner; the server reports them per fieldValidation), the
//     schema's defaults applied, then metadata and the structural schema
//     validated, with field paths (spec.replicas: Invalid value ...), then
//     the x-kubernetes-validations rules evaluated with the request's
//     context (registry.ContextValidator), unless a missing, unsupported,
//     too long, too many or mistyped value blocks them. Updates ratchet:
//     unchanged invalid values are not reported (rule failures on them
//     become warnings).
//   - Status writes validate status against properties[status] and run the
//     rules of the whole object, as Kubernetes' status strategy does.
//   - With the status subresource, the main resource ignores status and
//     /status changes only status; generation moves on changes outside
//     metadata (and status, when it is a subresource).
//   - With the scale subresource, autoscaling/v1 Scale reads and writes the
//     CRD's specReplicasPath, statusReplicasPath and labelSelectorPath.
//   - Tables use the version's additionalPrinterColumns (Name and Age when
//     there are none); field selectors know metadata.name,
//     metadata.namespace and the version's selectableFields.
//
// Resources reads the CRD during the call only; the descriptors it returns
// are immutable and safe for concurrent use.
package customresource
