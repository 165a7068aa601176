package apiserver

import (
	"net/url"
	"strings"
)

// queryBool reads a boolean query parameter as kube-apiserver's parameter
// codec does for every boolean option (watch, allowWatchBookmarks,
// sendInitialEvents, force, orphanDependents, follow, …): absent, "0" and
// "false" in any case are false; every other value is true, "True" and the
// empty string (?watch) included. Only the first value counts.
func queryBool(q url.Values, name string) bool {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return false
	}
	return parseQueryBool(vs[0])
}

// parseQueryBool is queryBool's rule for one present value.
func parseQueryBool(v string) bool {
	return v != "0" && !strings.EqualFold(v, "false")
}
