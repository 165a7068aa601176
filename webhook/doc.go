// Package webhook serves admission webhooks for operators: an HTTPS
// server speaking AdmissionReview (admission.k8s.io/v1, and v1beta1 for
// old API servers), and typed handlers that turn a Go type's defaulting
// and validation into mutating and validating webhooks. It owns the wire
// format; what an object may be is the operator's.
//
// # Typed handlers
//
// A Defaulter[T] changes the object it is given; the handler computes the
// JSON Patch (RFC 6902) from the object the API server sent to the
// defaulted one. Fields the Go type does not know are kept (the patch never
// removes what T could not read), and the decoding artefacts of T (a
// "creationTimestamp": null, an empty status) are not added: only what
// Default changed is patched.
//
// A Validator[T] is asked about creates, updates (old and new object) and
// deletes (the object being deleted, which the API server sends as
// oldObject). It returns warnings, shown to the client as kubectl shows
// them, and an error that refuses the request: an API status error
// (apierrors.NewInvalid, NewForbidden, ...) is returned as its Status, so
// the client sees the code, reason, message and causes it carries, behind
// the API server's `admission webhook "NAME" denied the request: `; any
// other error is a 403 Forbidden with the error's text. A Defaulter's
// error refuses the request the same way.
//
// T must be registered in the scheme given (the manager's): its kind there
// names the webhook's paths, MutatePath and ValidatePath
// ("/mutate-demo-example-com-v1-greeting", as controller-runtime names
// them, so kubebuilder manifests fit), and a request for another kind is
// an error.
//
// # Server
//
// Server is a manager runnable that runs on every replica (it needs no
// leader election). It serves TLS 1.2+ from CertDir/tls.crt and tls.key
// (reloaded when they change, as cert-manager rotates them), or from
// Options.GetCertificate. Handlers are registered by path, before or
// while it runs. builder.WebhookManagedBy registers the typed handlers of
// one kind on the manager's server.
//
//	err := builder.WebhookManagedBy[*v1.Greeting](mgr).
//		WithDefaulter(greetingDefaulter{}).
//		WithValidator(greetingValidator{}).
//		Complete()
//
// Inside a handler, RequestFrom(ctx) gives the admission request (user,
// operation, dry run, sub-resource).
package webhook
