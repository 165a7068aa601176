// Package fieldmanager tracks field ownership (metadata.managedFields) and
// merges server-side apply configurations, as kube-apiserver does, on top
// of k8s.io/apimachinery/pkg/util/managedfields.
//
// What it owns:
//   - The type converter: built once from the OpenAPI v3 definitions the
//     server publishes (internal/openapi), so that the server and kubectl
//     agree on list semantics (associative lists merge by their keys,
//     x-kubernetes-list-type / x-kubernetes-list-map-keys) and on the
//     group-version-kind of each model.
//   - One Resource per served resource, holding one FieldManager per
//     endpoint that writes it: the main resource, and its status and
//     finalize subresources. Fields a strategy resets on an endpoint (status
//     on the main resource, spec and the protected metadata on status) are
//     not tracked there, as Kubernetes' GetResetFields.
//   - Update: the Update-operation entry of a create, update or patch
//     (manager, time, apiVersion, FieldsV1). Entries sent in the request
//     body are taken as Kubernetes takes them: non-empty ones replace the
//     live ones, an empty list (or one empty entry) resets them, absent ones
//     keep the live ones; subresource writes always keep the live ones.
//     Top-level fields (spec, status, data…) identical in the live and the
//     new object are dropped from both before the comparison (reduce.go):
//     a status write no longer converts and compares the whole spec twice.
//     The entries come out as apimachinery computes them on the whole
//     objects; the reduction is skipped for custom resources and when an
//     entry is of another apiVersion (its comparison goes through a
//     conversion).
//   - UpdateScale: a write through the scale subresource, tracked on the
//     Scale objects by a field manager of their own and converted to and
//     from the object's entries by apimachinery's ScaleHandler (scale.go):
//     the writer's entry, of subresource scale and without a time, owns
//     the replicas path, as on kube-apiserver.
//   - Apply: the server-side apply merge of a YAML/JSON configuration for a
//     manager, with conflicts reported as 409 Status (causes of type
//     FieldManagerConflict) unless forced.
//   - ManagerName: the manager of a non-apply write, from ?fieldManager= or
//     else the user agent's first segment, as Kubernetes derives it.
//
// Objects passed in are not modified unless documented; Update and Apply
// return new objects of the resource's Go type. A Resource is safe for
// concurrent use.
package fieldmanager
