package apiserver

import (
	"net/http"
	"strings"
)

// requestInfo is what a resource request's path and method say.
type requestInfo struct {
	// Group, Version and Resource ("" group for /api/v1).
	Group, Version, Resource string
	// Namespace is "" for cluster-wide requests.
	Namespace string
	// Name is "" for collection requests.
	Name string
	// Subresource is "status", "scale", "binding", "finalize", or "".
	Subresource string
	// Verb is one of get, list, watch, create, update, patch, delete,
	// deletecollection.
	Verb string
}

// parseResourcePath parses /api/v1/... and /apis/GROUP/VERSION/... paths.
// ok is false for anything else (discovery documents are not resource
// requests).
func parseResourcePath(r *http.Request) (requestInfo, bool) {
	var info requestInfo
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		info.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.Group, info.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return info, false
	}
	watchPath := false
	if parts[0] == "watch" {
		watchPath, parts = true, parts[1:]
	}
	// namespaces/{ns}/{resource}... is a namespaced request, except for the
	// namespace object itself (namespaces/{name}[/status|/finalize]), as
	// Kubernetes resolves the ambiguity.
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		info.Namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		info.Resource = parts[0]
	case 2:
		info.Resource, info.Name = parts[0], parts[1]
	case 3:
		info.Resource, info.Name, info.Subresource = parts[0], parts[1], parts[2]
	default:
		return info, false
	}
	if info.Namespace != "" && info.Resource == "namespaces" {
		return info, false // namespaces/x/namespaces/... is not a path
	}
	if len(parts) == 0 || info.Resource == "" {
		return info, false
	}
	info.Verb = verbOf(r, info, watchPath)
	return info, info.Verb != ""
}

func verbOf(r *http.Request, info requestInfo, watchPath bool) string {
	collection := info.Name == ""
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		w := r.URL.Query().Get("watch")
		if watchPath || w == "true" || w == "1" {
			return "watch"
		}
		if collection {
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if collection {
			return "deletecollection"
		}
		return "delete"
	}
	return ""
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// isMutating reports whether a verb writes.
func isMutating(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
