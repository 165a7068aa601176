package apiserver

import (
	"fmt"
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

func unsupportedMediaType(ctype string) error {
	return newStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", ctype))
}

func notAcceptable() error {
	return newStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
}

// resourceNotFound is the 404 of a path no resource serves; its details are
// empty, not absent, as kube-apiserver sends them (kubectl dereferences
// them: `kubectl debug` crashed on a 404 without them).
func resourceNotFound() error {
	e := newStatusError(http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	e.ErrStatus.Details = &metav1.StatusDetails{}
	return e
}

func methodNotAllowed() error {
	e := newStatusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
	e.ErrStatus.Details = &metav1.StatusDetails{}
	return e
}
