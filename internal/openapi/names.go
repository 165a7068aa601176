package openapi

import (
	"reflect"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// modelNamer is implemented by the k8s.io/api and apimachinery types
// (generated OpenAPIModelName methods).
type modelNamer interface {
	OpenAPIModelName() string
}

// ModelName returns the OpenAPI definition name of a named Go type, as
// Kubernetes names it: the type's own OpenAPIModelName when it has one,
// otherwise its package path with the leading domain reversed and slashes
// turned into dots, then the type name ("k8s.io/api/core/v1".Pod becomes
// "io.k8s.api.core.v1.Pod").
func ModelName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := reflect.Zero(t).Interface().(modelNamer); ok {
		return n.OpenAPIModelName()
	}
	if n, ok := reflect.New(t).Interface().(modelNamer); ok {
		return n.OpenAPIModelName()
	}
	path := t.PkgPath()
	if path == "" {
		return t.Name()
	}
	segments := strings.Split(path, "/")
	domain := strings.Split(segments[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	segments[0] = strings.Join(domain, ".")
	name := strings.Join(segments, ".") + "." + t.Name()
	return strings.ReplaceAll(name, "-", "_")
}

// groupCamel returns the operation-ID form of an API group: "Core" for the
// core group, otherwise the group without a ".k8s.io" suffix, in camel
// case ("coordination.k8s.io" becomes "Coordination",
// "rbac.authorization.k8s.io" "RbacAuthorization").
func groupCamel(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// gvPrefix is the operation-ID infix of a group-version, e.g. "AppsV1".
func gvPrefix(gv schema.GroupVersion) string {
	return groupCamel(gv.Group) + upperFirst(gv.Version)
}

// gvTag is the OpenAPI tag of a group-version, e.g. "apps_v1", "core_v1".
func gvTag(gv schema.GroupVersion) string {
	return lowerFirst(groupCamel(gv.Group)) + "_" + gv.Version
}

// gvPath is the URL path of a group-version without leading slash:
// "api/v1" or "apis/<group>/<version>". It is also the key of the
// group-version in the /openapi/v3 discovery document.
func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}
