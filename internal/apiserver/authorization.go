package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// withAuthorization asks the server's authorizer about every request that
// carries a user (the authentication filter lets only the public paths
// through without one): an allowed request goes on; an authorizer error
// without an allow is a 500 (text, as kube-apiserver's); anything else is
// kube-apiserver's 403 Status.
func (s *Server) withAuthorization(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := registry.UserFrom(r.Context())
		if user.Name == "" {
			next.ServeHTTP(w, r)
			return
		}
		attrs := requestAttributes(r, user.AuthorizerUser())
		d, reason, err := s.authz.Authorize(r.Context(), attrs)
		if d == authorizer.DecisionAllow {
			audit.AddAnnotations(r.Context(), decisionAnnotation, "allow", reasonAnnotation, reason)
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			audit.AddAnnotation(r.Context(), reasonAnnotation, "internal error")
			s.log.Error("authorization failed", "method", r.Method, "path", r.URL.Path, "err", err)
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "Internal Server Error: %#v: %v", r.RequestURI, err)
			return
		}
		audit.AddAnnotations(r.Context(), decisionAnnotation, "forbid", reasonAnnotation, reason)
		s.resp.writeError(w, r, forbidden(attrs, reason))
	})
}

// The audit annotations of the decision, as kube-apiserver writes them.
const (
	decisionAnnotation = "authorization.k8s.io/decision"
	reasonAnnotation   = "authorization.k8s.io/reason"
)

// forbidden is kube-apiserver's refusal of attrs: the resource (with its
// group) and name in the details, and the message naming the user, verb,
// resource or path and scope, then the authorizer's reason.
func forbidden(a authorizer.Attributes, reason string) error {
	msg := forbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, fmt.Errorf("%s", msg))
}

func forbiddenMessage(a authorizer.Attributes) string {
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Name, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Name, a.Verb, res, a.APIGroup)
}

// requestAttributes describes r as kube-apiserver's RequestInfo does:
// paths under /api/VERSION and /apis/GROUP/VERSION are resource requests
// (the verb from the method; GET on a collection is list, or watch with a
// true watch parameter or under /watch/; DELETE on a collection is
// deletecollection; a list or watch selecting metadata.name names that
// object); everything else is a non-resource request whose verb is the
// lower-case method. The namespace of a namespace's own path
// (/api/v1/namespaces/NAME[/status|/finalize]) is NAME.
func requestAttributes(r *http.Request, user authorizer.User) authorizer.Attributes {
	a := authorizer.Attributes{User: user, Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return a
	}
	grouped := parts[0] == "apis"
	parts = parts[1:]
	if grouped {
		if len(parts) < 3 {
			return a
		}
		a.APIGroup, parts = parts[0], parts[1:]
	}
	a.ResourceRequest = true
	a.APIVersion, parts = parts[0], parts[1:]
	if parts[0] == "watch" || parts[0] == "proxy" {
		if len(parts) < 2 {
			return a // kube-apiserver cannot tell the resource either
		}
		a.Verb, parts = parts[0], parts[1:]
	} else {
		a.Verb = methodVerb(r.Method)
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		a.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	if len(parts) >= 3 && a.Verb != "proxy" {
		a.Subresource = parts[2]
	}
	if len(parts) >= 2 {
		a.Name = parts[1]
	}
	a.Resource = parts[0]
	if a.Name == "" && a.Verb == "get" {
		a.Verb = "list"
		if vs := r.URL.Query()["watch"]; len(vs) > 0 && parseQueryBool(vs[0]) {
			a.Verb = "watch"
		}
	}
	if a.Name == "" && a.Verb == "delete" {
		a.Verb = "deletecollection"
	}
	if a.Name == "" && (a.Verb == "list" || a.Verb == "watch") {
		a.Name = selectedName(r)
	}
	if a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection" {
		a.FieldSelector = fieldRequirements(r)
	}
	return a
}

// fieldRequirements is the request's parsed fieldSelector (nil when it has
// none or it does not parse), which authorizers may read (the Node
// authorizer's spec.nodeName).
func fieldRequirements(r *http.Request) fields.Requirements {
	fs := r.URL.Query().Get("fieldSelector")
	if fs == "" {
		return nil
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return nil
	}
	return sel.Requirements()
}

func methodVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// selectedName is the name a list or watch selects with a
// metadata.name field selector, as kube-apiserver authorizes it.
func selectedName(r *http.Request) string {
	fs := r.URL.Query().Get("fieldSelector")
	if fs == "" {
		return ""
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return ""
	}
	// as kube's request info: only a name that is a valid path segment
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || name == "." || name == ".." || strings.ContainsAny(name, "/%") {
		return ""
	}
	return name
}
