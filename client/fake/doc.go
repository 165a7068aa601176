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
// Not supported: server-side apply (client.Apply is refused with 400),
// defaulting and validation (the fake stores what it is given), owner
// garbage collection, watches.
package fake
