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
	// Subresource is "status", "scale", "binding", "log", …, or "".
	Subresource string
	// Subpath is what follows a subresource's name (proxy paths), without
	// the leading "/".
	Subpath string
	// Verb is one of get, list, watch, create, update, patch, delete,
	// deletecollection, or options (an OPTIONS request to a subresource,
	// which only proxies serve).
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
		if len(parts) < 3 || watchPath {
			return info, false
		}
		info.Resource, info.Name, info.Subresource = parts[0], parts[1], parts[2]
		info.Subpath = strings.Join(parts[3:], "/")
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
		if watchPath || queryBool(r.URL.Query(), "watch") {
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
	case http.MethodOptions:
		if info.Subresource != "" {
			return "options" // proxied (pods/proxy, …); refused elsewhere
		}
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

// longRunningSubresources stream for as long as the client keeps them, as
// Kubernetes' long-running request check counts them: no request timeout,
// no in-flight slot.
var longRunningSubresources = map[string]bool{"log": true, "exec": true, "attach": true, "portforward": true, "proxy": true}

// isLongRunning reports whether a request streams (watches aside).
func isLongRunning(info requestInfo) bool {
	return longRunningSubresources[info.Subresource]
}
