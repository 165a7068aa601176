package apiserver

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// serveProfiling answers /debug/pprof/… as kube-apiserver does with
// --profiling (its default): Go's runtime profiles, behind authentication
// and authorization like any non-resource URL (cluster-admin and
// system:masters may read them; RBAC grants "/debug/*" to nobody else by
// default). Without Config.Profiling the paths are not found.
func serveProfiling(w http.ResponseWriter, r *http.Request) {
	switch name, _ := strings.CutPrefix(r.URL.Path, "/debug/pprof/"); name {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		// The index, and the named profiles (heap, goroutine, allocs, …).
		pprof.Index(w, r)
	}
}

// isProfilingPath reports whether p is one of the profiling paths.
func isProfilingPath(p string) bool {
	return p == "/debug/pprof" || strings.HasPrefix(p, "/debug/pprof/")
}
