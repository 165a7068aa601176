package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// requestAttributes describes r for the authorizer as kube-apiserver's
// RequestInfo does: resource requests with their verb, namespace,
// resource, subresource and name; anything else a non-resource request
// whose verb is the lower-case method.
func requestAttributes(r *http.Request, user authorizer.User) authorizer.Attributes {
	info, ok := parseResourcePath(r)
	if !ok {
		return authorizer.Attributes{User: user, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	}
	return authorizer.Attributes{User: user, Verb: info.Verb, ResourceRequest: true, Namespace: info.Namespace,
		APIGroup: info.Group, APIVersion: info.Version, Resource: info.Resource, Subresource: info.Subresource,
		Name: info.Name, Path: r.URL.Path}
}

// forbidden is kube-apiserver's 403 for a: the resource and name in the
// details, the message naming user, verb, resource or path and scope, then
// the reason.
func forbidden(a authorizer.Attributes, reason string) error {
	var msg string
	switch res := a.Resource; {
	case !a.ResourceRequest:
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	case a.Namespace != "":
		if a.Subresource != "" {
			res += "/" + a.Subresource
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Name, a.Verb, res, a.APIGroup, a.Namespace)
	default:
		if a.Subresource != "" {
			res += "/" + a.Subresource
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Name, a.Verb, res, a.APIGroup)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, fmt.Errorf("%s", msg))
}
