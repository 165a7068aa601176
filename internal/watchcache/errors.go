package watchcache

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RetryAfterSeconds is the Retry-After the server sends with a TooLargeError
// (Kubernetes uses 1).
const RetryAfterSeconds = 1

var (
	// ErrExpired matches every ExpiredError (errors.Is).
	ErrExpired = errors.New("watchcache: too old resource version")
	// ErrTooLarge matches every TooLargeError (errors.Is).
	ErrTooLarge = errors.New("watchcache: too large resource version")
	// ErrNotReady is returned before the first list completed.
	ErrNotReady = errors.New("watchcache: cache is not ready")
	// ErrStopped is returned once Run has returned, and is the Err of the
	// watchers it ended.
	ErrStopped = errors.New("watchcache: cache is stopped")
	// ErrWatcherTooSlow is the Err of a watcher ended because its buffer was
	// full when an event was due.
	ErrWatcherTooSlow = errors.New("watchcache: watcher fell too far behind")
	// ErrNoProtobuf is the error of Frame.ProtoBytes in a cache without
	// Config.EncodeProto (kinds with no protobuf form: custom resources).
	ErrNoProtobuf = errors.New("watchcache: the kind has no protobuf encoding")
)

// ExpiredError says a watch position is older than what the cache serves.
// The server answers 410 Gone, reason Expired (Status returns exactly that);
// clients re-list.
type ExpiredError struct {
	// Requested is the revision the watch asked to start after; Oldest the
	// oldest revision the cache can still start after.
	Requested, Oldest int64
}

func (e *ExpiredError) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.Requested, e.Oldest)
}

// Unwrap makes errors.Is(err, ErrExpired) true.
func (e *ExpiredError) Unwrap() error { return ErrExpired }

// Status is the Kubernetes status of the error (it implements
// k8s.io/apimachinery/pkg/api/errors.APIStatus).
func (e *ExpiredError) Status() metav1.Status {
	return expiredStatus(e.Error())
}

// TooLargeError says the cache did not reach a requested revision within
// Config.ProgressTimeout. The server answers 504 reason Timeout with cause
// ResourceVersionTooLarge and Retry-After: RetryAfterSeconds, which Status
// returns.
type TooLargeError struct {
	// Requested is the revision waited for, Current the cache revision when
	// the wait gave up.
	Requested, Current int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("Too large resource version: %d, current: %d", e.Requested, e.Current)
}

// Unwrap makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Status is the Kubernetes status of the error (it implements
// k8s.io/apimachinery/pkg/api/errors.APIStatus).
func (e *TooLargeError) Status() metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "Timeout: " + e.Error(), // as kube-apiserver's timeout errors
		Reason:   metav1.StatusReasonTimeout,
		Code:     http.StatusGatewayTimeout,
		Details: &metav1.StatusDetails{
			Causes: []metav1.StatusCause{{
				Type:    metav1.CauseTypeResourceVersionTooLarge,
				Message: "Too large resource version",
			}},
			RetryAfterSeconds: RetryAfterSeconds,
		},
	}
}

// statusCarrier is the interface of errors that carry a Kubernetes Status
// (k8s.io/apimachinery/pkg/api/errors.APIStatus).
type statusCarrier interface {
	error
	Status() metav1.Status
}

// answerOf returns the Status a Decode error carries: such an error is the
// server's answer (a conversion webhook that failed), not corrupt data.
func answerOf(err error) (metav1.Status, bool) {
	var st statusCarrier
	if !errors.As(err, &st) {
		return metav1.Status{}, false
	}
	return st.Status(), true
}

// errDecodeAnswered ends a storage watch whose event Decode refused with a
// Status: the cache lists again.
var errDecodeAnswered = errors.New("an event could not be decoded")

// expiredStatus is the 410 Expired status of errors and ERROR frames.
func expiredStatus(message string) metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   metav1.StatusReasonExpired,
		Code:     http.StatusGone,
	}
}
