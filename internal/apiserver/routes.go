package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Version is what /version reports: the Kubernetes API level served.
var serverVersion = version.Info{
	Major: "1", Minor: "37", EmulationMajor: "1", EmulationMinor: "37", MinCompatibilityMajor: "1", MinCompatibilityMinor: "36",
	GitVersion: "v1.37.0-setpoint", GitCommit: "", GitTreeState: "clean",
	BuildDate: "", GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
}

// buildHandler assembles the filter chain and the routes.
func (s *Server) buildHandler() http.Handler {
	disc, oapi := s.disc, s.oapi
	oapiMux := http.NewServeMux()
	oapi.Register(oapiMux)
	metricsHandler := promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
	routes := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		parts := splitPath(p)
		switch {
		case p == "/healthz" || p == "/livez" || strings.HasPrefix(p, "/healthz/") || strings.HasPrefix(p, "/livez/"):
			writePlain(w, http.StatusOK, "ok")
		case p == "/readyz" || strings.HasPrefix(p, "/readyz/"):
			s.serveReadyz(w)
		case p == "/version" || p == "/version/":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(serverVersion)
		case isOIDCPath(p):
			s.serveOIDC(w, r)
		case p == "/metrics":
			metricsHandler.ServeHTTP(w, r)
		case s.cfg.Profiling && isProfilingPath(p):
			if p == "/debug/pprof" {
				http.Redirect(w, r, "/debug/pprof/", http.StatusMovedPermanently)
				return
			}
			serveProfiling(w, r)
		case strings.HasPrefix(p, "/openapi/"):
			oapiMux.ServeHTTP(w, r)
		case s.serveAggregated(w, r, parts):
		case len(parts) >= 1 && ((parts[0] == "api" && len(parts) <= 2) || (parts[0] == "apis" && len(parts) <= 3)):
			disc.ServeHTTP(w, r)
		default:
			s.serveResource(w, r)
		}
	})
	return withAuditInit(s.withRecovery(s.withAuthentication(s.withAudit(s.withImpersonation(s.withPriorityAndFairness(s.withAuthorization(routes)))))))
}

func writePlain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

func (s *Server) serveReadyz(w http.ResponseWriter) {
	select {
	case <-s.ready:
		writePlain(w, http.StatusOK, "ok")
	default:
		writePlain(w, http.StatusServiceUnavailable, "[-]setpoint-started failed: not ready yet\nreadyz check failed")
	}
}

// serveResource dispatches a request on /api/v1/... or /apis/G/V/... .
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request) {
	info, ok := parseResourcePath(r)
	if !ok {
		s.resp.writeError(w, r, resourceNotFound())
		return
	}
	e := s.lookup(info)
	if e == nil {
		if info.Group != "" && !s.servesGroup(info.Group) {
			// As kube-apiserver: a group it does not serve has no handler
			// at all, only the plain not-found of its mux.
			http.NotFound(w, r)
			return
		}
		s.resp.writeError(w, r, resourceNotFound())
		return
	}
	mt, ok := negotiateFor(r.Header.Get("Accept"), !e.res.Unstructured)
	if sr := e.res.Subresource(info.Subresource); !ok && sr != nil && sr.Connect != nil {
		mt, ok = mediaType{Type: mimeJSON}, true // the backend's answer, whatever it is; errors in JSON
	}
	if !ok {
		s.resp.writeError(w, r, notAcceptable(e.res.Unstructured, info.Name == "" && info.Subresource == ""))
		return
	}
	r = r.WithContext(withWarnings(r.Context(), w))
	if e.res.Deprecation != "" && (e.res.Serves(info.Verb) || info.Verb == "watch" && e.res.Serves("list")) && routed(r, e, info) {
		registry.AddWarning(r.Context(), e.res.Deprecation)
	}
	s.instrument(info, w, func(w http.ResponseWriter) {
		switch {
		case e.res.Virtual != nil:
			s.handleVirtual(w, r, e, info, mt)
			return
		case info.Verb == "watch":
			s.handleWatch(w, r, e, info, mt)
			return
		case isLongRunning(info):
			s.dispatch(w, r, e, info, mt) // no request timeout: streams
			return
		}
		timeout, err := s.requestTimeout(r)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		s.dispatch(w, r.WithContext(ctx), e, info, mt)
	})
}

// routed reports whether kube-apiserver's router would hand the request
// to the resource's handler (which adds the deprecation warning): a PATCH
// of a media type the route does not consume gets the router's own 415.
func routed(r *http.Request, e *entry, info requestInfo) bool {
	if info.Verb != "patch" {
		return true
	}
	if sr := e.res.Subresource(info.Subresource); sr != nil && sr.Connect != nil {
		return true
	}
	_, err := patchType(r, e.res.Unstructured)
	return err == nil
}

// lookup finds the entry of a request, checking scope: a cluster-scoped
// resource under a namespace path does not exist.
func (s *Server) lookup(info requestInfo) *entry {
	e := s.entry(schema.GroupVersionResource{Group: info.Group, Version: info.Version, Resource: info.Resource})
	if e == nil || (info.Namespace != "" && !e.res.Namespaced) {
		return nil
	}
	return e
}

// servesGroup reports whether any served resource is in group.
func (s *Server) servesGroup(group string) bool {
	for gvr := range s.table.load() {
		if gvr.Group == group {
			return true
		}
	}
	return false
}

// dispatch routes a non-watch request by subresource and verb.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	if info.Subresource != "" {
		s.dispatchSubresource(w, r, e, info, mt)
		return
	}
	switch info.Verb {
	case "get":
		s.handleGet(w, r, e, info, mt)
	case "list":
		s.handleList(w, r, e, info, mt)
	case "create":
		if info.Name != "" {
			s.resp.writeError(w, r, methodNotAllowed())
			return
		}
		s.handleCreate(w, r, e, info, mt)
	case "update", "patch":
		if info.Name == "" {
			// As kube-apiserver: a collection has no PUT or PATCH.
			s.resp.writeError(w, r, methodNotAllowed())
			return
		}
		if info.Verb == "update" {
			s.handleUpdate(w, r, e, info, mt)
		} else {
			s.handlePatch(w, r, e, info, mt)
		}
	case "delete":
		s.handleDelete(w, r, e, info, mt)
	case "deletecollection":
		if e.res.NoDeleteCollection {
			s.resp.writeError(w, r, methodNotAllowed())
			return
		}
		s.handleDeleteCollection(w, r, e, info, mt)
	default:
		s.resp.writeError(w, r, methodNotAllowed())
	}
}

// requestTimeout is how long a request that does not stream may run: the
// client's `?timeout=` when it is shorter than the server's limit (0 or
// more asks for the limit), as kube-apiserver's request deadline; a
// timeout that does not parse is a 400.
func (s *Server) requestTimeout(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return s.cfg.RequestTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err))
	}
	if d > 0 && d < s.cfg.RequestTimeout {
		return d, nil
	}
	return s.cfg.RequestTimeout, nil
}
