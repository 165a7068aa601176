// Package openapi builds and serves the OpenAPI documents of the resources
// the API server serves: /openapi/v3 (one OpenAPI 3.0 document per
// group-version, plus the index naming them) and /openapi/v2 (one Swagger
// 2.0 document, as JSON or gnostic protobuf).
//
// # Schemas
//
// Schemas are derived by reflection from the Go types that each typed
// Resource's New and NewList return, and named as Kubernetes names them
// (ModelName: "io.k8s.api.core.v1.Pod"). Rules:
//
//   - Named structs become definitions; fields follow their json tags,
//     embedded structs (TypeMeta) are flattened, and a field without
//     omitempty/omitzero is required.
//   - Descriptions come from the types' SwaggerDoc methods (the few types
//     without one carry descriptions written here).
//   - patchStrategy/patchMergeKey tags become x-kubernetes-patch-strategy
//     and x-kubernetes-patch-merge-key; lists get x-kubernetes-list-type
//     (map keyed by the merge key, set for merged scalars).
//   - What Kubernetes takes from comments on its Go types (enum values,
//     list and map types, list map keys, required properties, unions,
//     defaults) comes from zz_generated_facts.go, generated from
//     kube-apiserver's own documents by compat/cmd/openapifacts (facts.go);
//     for the built-in models it replaces the guesses above. Defaults are
//     published in OpenAPI v3 only, as kube-apiserver does.
//   - Types with a custom JSON form use their own OpenAPI methods
//     (metav1.Time: string/date-time; intstr.IntOrString: int-or-string;
//     resource.Quantity: string, in v3 oneOf string/number); RawExtension
//     and FieldsV1 are objects, []byte is string/byte, maps are
//     additionalProperties.
//   - Top-level kinds carry x-kubernetes-group-version-kind (a list).
//   - In v3 a property referring to a definition wraps the $ref in a
//     one-element allOf when it has a description, default or extensions,
//     so that they are not $ref siblings (a bare $ref otherwise); in v2
//     they sit next to $ref. Both forms are what kubectl
//     explain, kubectl apply (strategic merge) and the server-side-apply
//     type converter read.
//
// # Custom resources
//
// A Resource with Unstructured set has no Go type: its kind is published
// as its Schema under its ModelName (with x-kubernetes-group-version-kind
// added), and its list kind as ModelName+"List" (apiVersion, kind,
// metadata: ListMeta, required items: the kind), as Kubernetes publishes
// custom resources. The schema may refer only to ObjectMeta, ListMeta and
// the models of custom resources; anything else fails New and Update.
// Each version is its own Resource with its own model. Their operations
// are those of typed kinds, with the media types custom resources are
// served as (JSON and YAML, no strategic merge patch), and delete
// documented as answering a Status (as is the delete of a typed kind
// unless it returns the deleted object). In Swagger 2.0 the schema is reduced
// to what v2 and kubectl's v2 parser can hold (see customSchema: no
// nullable, no oneOf/anyOf/not, no defaults; a root preserving unknown
// fields becomes a bare object). DeleteOptions and WatchEvent list, as in
// Kubernetes, every group-version of kube-apiserver's scheme in Swagger
// 2.0 (generated facts), and in each v3 document the core group-version
// and the document's own (of typed kinds only), so custom resources
// coming and going leave the built-in documents unchanged.
//
// # Operations
//
// Besides one document per group-version, /openapi/v3 names those of
// /api/, /apis/, each built-in group's /apis/<group>/ and /version/, as
// kube-apiserver does; info.version is the major.minor version.
// Parameters shared by every operation of a path sit at the path level,
// and every parameter says uniqueItems, as kube-apiserver publishes them.
//
// Every resource gets the operations of kube-apiserver: list, watch
// (including the deprecated /watch/ paths), create, get, update, patch,
// delete, deletecollection, list across namespaces, and its status, scale
// and binding subresources. Each operation carries x-kubernetes-action and
// x-kubernetes-group-version-kind, and its own query parameters inline.
// kubectl sends fieldValidation=Strict (server-side validation) only when
// the PATCH operation of the kind lists a fieldValidation parameter of its
// own; every PATCH here does.
//
// # Caching and invariants
//
//   - A Service serves one immutable snapshot at a time; Update derives
//     the v3 definitions and paths (an invalid resource set fails here),
//     then swaps an atomic pointer. A failed Update keeps the previous
//     snapshot. The v3 documents are encoded on the first /openapi/v3
//     request (or SetAggregated) per snapshot, the v2 JSON and protobuf
//     forms on their first request (sync.Once each): a server nobody asks
//     for OpenAPI never pays for encoding it.
//   - Update reuses the encoded v3 document of every group-version whose
//     inputs did not change (reuse.go), when the previous snapshot was
//     encoded: a CRD change re-encodes its own group-versions only.
//     Definitions are still derived anew per Update.
//   - Each v3 group-version document is addressed as
//     /openapi/v3/<path>?hash=<SHA-256>. A matching hash is answered with
//     "Cache-Control: public, immutable" and a one-year Expires; a stale
//     hash is redirected (301) to the current URL; other requests get an
//     ETag and If-None-Match answers 304.
//   - Schemas returns the v3 definitions; they are shared and read-only.
//
// # Calling protocol
//
//	s, err := openapi.New(resources, openapi.Options{Version: "v1.37.0-setpoint"})
//	s.Register(mux)         // GET /openapi/v2, /openapi/v3, /openapi/v3/{gv...}
//	err = s.Update(newResources)
package openapi
