// Package admission is the API server's admission chain: the plugins every
// create, update and delete passes through between the decoding of the
// request and the write, in kube-apiserver's order.
//
// # The contract
//
// A plugin has a Name (kube-apiserver's, as --enable-admission-plugins
// takes it) and one or both of
//
//	Admit(ctx, env, a) (*registry.Txn, error)     // Mutator: may change a.Object
//	Validate(ctx, env, a) (*registry.Txn, error)  // Validator: must not
//
// a (registry.Attributes) carries the operation, the resource
// (a.Resource: GVR, GVK, scope), the subresource, the object and the old
// object, and the request (namespace, name, user, dry run). env
// (registry.Env) reads and writes other objects through the server. A
// refusal is an API error sent to the client as is; Forbidden words the
// usual one (`pods "p" is forbidden: …`, the object named by Name). What a
// plugin takes for a write not yet stored (a quota charge) it returns as a
// Txn, committed once the write is stored and reverted when it is not. A
// plugin keeps no state of its own: it reads what it needs through env.
// Each plugin is a package under internal/admission with its own tests.
//
// # The chain
//
// For one write the server runs (internal/apiserver admitter, validator):
//
//  1. defaulting (the kind's strategy);
//  2. the mutating phase: every Mutator in Order, then the kind's own
//     admission (registry.Resource.Admit, which completes what
//     kube-apiserver's REST storage completes after admission, e.g. a
//     Service's cluster IP; not on deletes);
//  3. the strategy's PrepareForCreate/PrepareForUpdate and validation
//     (422);
//  4. the validating phase (deletes too): the kind's
//     registry.Resource.AdmitValidate (not on deletes), then
//     every Validator in Order, ResourceQuota last;
//  5. the write.
//
// Both phases run again on each attempt of a write that loses a
// compare-and-swap race. On creates with metadata.generateName the
// mutating phase sees a.GeneratedName (kube-apiserver names the object
// after it).
//
// Order is kube-apiserver's: NamespaceLifecycle, LimitRanger,
// ServiceAccount, NodeRestriction, PodSecurity, Priority,
// DefaultTolerationSeconds, DefaultStorageClass,
// StorageObjectInUseProtection, RuntimeClass, (the admission policies and
// webhooks), ResourceQuota. Enabled resolves the flags
// --enable-admission-plugins and --disable-admission-plugins against
// kube-apiserver's default set; package plugins builds the chain of the
// plugins setpoint implements.
package admission
