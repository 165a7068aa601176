// Package fake is an in-memory client.Client for unit tests of
// reconcilers, as controller-runtime's fake client: no server, no cache.
//
//	c := fake.NewClientBuilder().WithScheme(s).WithObjects(app).WithStatusSubresource(&v1.App{}).Build()
//
// Its tracker keeps, per kind, the objects as the API server would: each
// write bumps a resourceVersion (one counter for all objects) and an
// update or patch carrying a stale one is a 409 Conflict; create fills
// uid, creationTimestamp and a name from generateName, and refuses an
// existing name (409 AlreadyExists) or a resourceVersion (400); Delete of
// an object with finalizers only sets its deletionTimestamp, and the
// update that removes the last finalizer of such an object deletes it.
// For kinds given to WithStatusSubresource, Update and Patch keep the
// stored status and Status().Update/Patch change only status; for other
// kinds Status() writes are 404 Not Found, as the server answers. Get and
// List return deep copies; List honours namespaces, label selectors, and
// field selectors on metadata.name, metadata.namespace and the indexes
// given to WithIndex. Patches: JSON merge, JSON (RFC 6902) and strategic
// merge (built-in kinds). Interceptor funcs (WithInterceptorFuncs) run
// instead of the calls they name, to inject errors.
//
// # Managed fields and server-side apply
//
// Every write records metadata.managedFields as the server does, through
// k8s.io/apimachinery/pkg/util/managedfields: creates, updates and
// patches an Update entry for their FieldOwner, applies an Apply entry.
// Patch (and Status().Patch) with client.Apply is server-side apply: a
// FieldOwner is required (422 otherwise, as the server answers), a missing
// object is created, the applier owns the fields it applies and loses
// those it stops applying, and a field another manager owns with another
// value is a 409 Conflict whose causes (FieldManagerConflict) name the
// field and the manager, unless ForceOwnership takes it. As on the server,
// with a status subresource the main resource does not own status and the
// status endpoint owns only status. Objects are typed for this by the type
// converters given to WithTypeConverters, by default one deduced from the
// objects themselves: maps and structs merge field by field, but every list
// is atomic (the server merges lists such as containers by key); give a
// converter built from your kinds' OpenAPI schemas for that.
//
// Not supported: defaulting and validation (the fake stores what it is
// given), owner garbage collection, watches.
package fake
