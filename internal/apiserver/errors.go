package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Errors apimachinery has no constructor for, shaped as Kubernetes sends
// them.

func newStatusError(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg,
	}}
}

// routingError is an error kube-apiserver's router answers (no route, no
// method, no representation): with empty details.
func routingError(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	err := newStatusError(code, reason, msg)
	err.ErrStatus.Details = &metav1.StatusDetails{}
	return err
}

func unsupportedMediaType(custom bool) error {
	types := "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	if custom {
		types = "application/json, application/yaml"
	}
	return newStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+types)
}

// notAcceptable lists the representations of the endpoint: custom
// resources have no protobuf; collections add the watch streams.
func notAcceptable(custom, collection bool) error {
	types := "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	switch {
	case custom && collection:
		types = "application/json, application/yaml, application/json;stream=watch"
	case custom:
		types = "application/json, application/yaml"
	case collection:
		types += ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	}
	return routingError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"406: Not Acceptable\n\nAvailable representations: "+types)
}

// resourceNotFound is the 404 of a path no resource serves; its details are
// empty, not absent, as kube-apiserver sends them (kubectl dereferences
// them: `kubectl debug` crashed on a 404 without them).
func resourceNotFound() error {
	return routingError(http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
}

// methodNotAllowed is the router's answer to a method the path does not
// serve; its message names neither.
func methodNotAllowed() error {
	return routingError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
}
