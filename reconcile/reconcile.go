package reconcile

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Request names the object to reconcile. Namespace is empty for
// cluster-scoped objects. Requests are comparable and are the controller's
// workqueue items.
type Request struct {
	types.NamespacedName
}

// Result tells the controller when to reconcile the same Request again
// after a successful call. The zero Result means "not until something
// changes".
type Result struct {
	// Requeue asks for another call after the key's rate-limited backoff.
	// Ignored when RequeueAfter is positive.
	Requeue bool
	// RequeueAfter, if positive, asks for another call once it has elapsed.
	RequeueAfter time.Duration
}

// IsZero reports whether r asks for nothing.
func (r Result) IsZero() bool { return !r.Requeue && r.RequeueAfter <= 0 }

// Reconciler converges the object named by a Request.
type Reconciler interface {
	// Reconcile is called with a context that ends when the controller
	// stops; an in-flight call is allowed to finish. It may return a
	// Result with a nil error, or an error (TerminalError to stop retries);
	// the Result is ignored when the error is non-nil. A panic is recovered
	// by the controller and treated as an ordinary (retried) error.
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// Func adapts a function to a Reconciler.
type Func func(ctx context.Context, req Request) (Result, error)

// Reconcile implements Reconciler.
func (f Func) Reconcile(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// terminalError marks an error that retrying cannot fix.
type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// TerminalError wraps err so that the controller logs it and does not
// retry. TerminalError(nil) is nil. The result still matches err with
// errors.Is and errors.As.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or any error it wraps, was made by
// TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}
