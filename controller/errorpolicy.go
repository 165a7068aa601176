package controller

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// ErrorClass is the kind of a reconcile error, as the controller decides
// whether to retry it. Its value is the "class" label of
// controller_runtime_reconcile_errors_total.
type ErrorClass string

// The error classes, in the order Classify tests them.
const (
	// ClassTerminal: the reconciler wrapped the error with
	// reconcile.TerminalError. Never retried.
	ClassTerminal ErrorClass = "terminal"
	// ClassPanic: the reconciler panicked (recovered).
	ClassPanic ErrorClass = "panic"
	// ClassConflict: 409 Conflict (a stale resourceVersion). Retried at
	// once up to MaxImmediateConflictRetries failures, then with backoff.
	// (409 AlreadyExists is ClassOther.)
	ClassConflict ErrorClass = "conflict"
	// ClassInvalid: 422 Invalid, the server refused the object. Not
	// retried by default.
	ClassInvalid ErrorClass = "invalid"
	// ClassBadRequest: 400 BadRequest. Not retried by default.
	ClassBadRequest ErrorClass = "bad_request"
	// ClassForbidden: 403 Forbidden (RBAC, admission, an exceeded quota, a
	// terminating namespace). Retried by default: those often pass.
	ClassForbidden ErrorClass = "forbidden"
	// ClassNotFound: 404 NotFound. Retried by default: a dependent may
	// not be in the cache yet.
	ClassNotFound ErrorClass = "not_found"
	// ClassOther: anything else (timeouts, 429, 5xx, transport errors).
	ClassOther ErrorClass = "other"
)

// errorClasses lists every class, for exporting the series at zero.
var errorClasses = []ErrorClass{ClassTerminal, ClassPanic, ClassConflict, ClassInvalid, ClassBadRequest,
	ClassForbidden, ClassNotFound, ClassOther}

// DefaultNotRetried are the classes a controller does not retry unless
// Options.NotRetried says otherwise: the API refused the request itself,
// so sending it again cannot succeed until something else changes, and
// that change is an event that enqueues the object again.
var DefaultNotRetried = []ErrorClass{ClassInvalid, ClassBadRequest}

// panicError is a recovered panic of a reconciler.
type panicError struct{ value any }

func (e *panicError) Error() string {
	return fmt.Sprintf("panic in reconciler: %v [recovered]", e.value)
}

// Classify returns the class of a reconcile error. Wrapped errors are
// seen through (errors.As).
func Classify(err error) ErrorClass {
	var p *panicError
	switch {
	case reconcile.IsTerminal(err):
		return ClassTerminal
	case errors.As(err, &p):
		return ClassPanic
	case apierrors.IsConflict(err):
		return ClassConflict
	case apierrors.IsInvalid(err):
		return ClassInvalid
	case apierrors.IsBadRequest(err):
		return ClassBadRequest
	case apierrors.IsForbidden(err):
		return ClassForbidden
	case apierrors.IsNotFound(err):
		return ClassNotFound
	}
	return ClassOther
}

// retried reports whether errors of class are retried under notRetried.
func retried(class ErrorClass, notRetried []ErrorClass) bool {
	return class != ClassTerminal && !slices.Contains(notRetried, class)
}

// dropEvent records, on the object of a dropped request, why the
// controller gave up on it; only when the controller knows the kind of its
// requests' objects (Options.ObjectKind) and has a recorder.
func (c *Controller) dropEvent(req reconcile.Request, failures int, err error) {
	if c.recorder == nil || c.kind.Kind == "" {
		return
	}
	apiVersion, kind := c.kind.ToAPIVersionAndKind()
	ref := &corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: req.Namespace, Name: req.Name}
	c.recorder.Eventf(ref, corev1.EventTypeWarning, ReasonMaxRetriesExceeded,
		"%s controller gave up after %d failed reconciles: %v", c.name, failures, err)
}

// ReasonMaxRetriesExceeded is the reason of the Warning event recorded on
// an object whose request was dropped after Options.MaxRetries failures.
const ReasonMaxRetriesExceeded = "MaxRetriesExceeded"
