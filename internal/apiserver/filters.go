package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// publicPaths are served without authentication, as Kubernetes grants them
// to system:unauthenticated.
func isPublicPath(p string) bool {
	switch p {
	case "/healthz", "/livez", "/readyz", "/version", "/version/":
		return true
	}
	return strings.HasPrefix(p, "/healthz/") || strings.HasPrefix(p, "/livez/") || strings.HasPrefix(p, "/readyz/")
}

// withAuthentication admits requests that carry a known bearer token (or
// a client certificate signed by the cluster CA) and refuses the rest with
// 401, except for the public paths.
func (s *Server) withAuthentication(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, ok := s.authenticate(r); ok {
			r = r.WithContext(registry.WithUser(r.Context(), user))
		} else if !isPublicPath(r.URL.Path) {
			s.auditFailedAuthentication(w, r, func(w http.ResponseWriter) {
				s.resp.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate finds who a request runs as: a bearer token (a static
// token, else a service-account token for the API server's audiences),
// else a client certificate signed by the cluster CA (user = CommonName,
// groups = Organization); first of all, a front proxy's request
// (requestheader.go).
func (s *Server) authenticate(r *http.Request) (registry.UserInfo, bool) {
	if u, ok := s.requestHeader.authenticate(r); ok {
		return u, true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		tok, found := strings.CutPrefix(h, "Bearer ")
		if !found {
			return registry.UserInfo{}, false
		}
		u, _, err := s.authenticateToken(r.Context(), strings.TrimSpace(tok), nil)
		return u, err == nil
	}
	if r.TLS != nil {
		for _, chain := range r.TLS.VerifiedChains {
			if s.signedByClusterCA(chain) {
				c := chain[0]
				return registry.UserInfo{Name: c.Subject.CommonName, Groups: append(c.Subject.Organization, "system:authenticated")}, true
			}
		}
	}
	return registry.UserInfo{}, false
}

// errInvalidBearerToken is kube-apiserver's answer for a bearer token no
// authenticator accepts.
var errInvalidBearerToken = errors.New("invalid bearer token")

// authenticateToken authenticates a bearer token for audiences (the API
// server's when empty) and returns its user and the audiences it is valid
// for: one of the static tokens (valid for the API server's audiences
// only), else a service-account token. A refusal is worded as
// kube-apiserver's TokenReview words it: "invalid bearer token", followed
// by the service-account authenticator's reason when the token is one of
// this server's service-account tokens.
func (s *Server) authenticateToken(ctx context.Context, tok string, audiences []string) (registry.UserInfo, []string, error) {
	apiAuds := s.tokenIssuer.Audiences()
	if len(audiences) == 0 {
		audiences = apiAuds
	}
	if u, ok := s.tokens.Lookup(tok); ok {
		var common []string
		for _, a := range apiAuds {
			if slices.Contains(audiences, a) {
				common = append(common, a)
			}
		}
		if len(common) > 0 {
			groups := u.Groups
			if !slices.Contains(groups, "system:authenticated") {
				groups = append(slices.Clone(groups), "system:authenticated")
			}
			return registry.UserInfo{Name: u.Name, UID: u.UID, Groups: groups}, common, nil
		}
	}
	u, auds, err := s.authenticateServiceAccount(ctx, tok, audiences)
	switch {
	case err == nil:
		return u, auds, nil
	case errors.Is(err, serviceaccount.ErrNotServiceAccountToken):
		return registry.UserInfo{}, nil, errInvalidBearerToken
	default:
		s.log.Debug("service account token refused", "err", err)
		return registry.UserInfo{}, nil, fmt.Errorf("[%w, %v]", errInvalidBearerToken, err)
	}
}

// inflightLimiter caps concurrent requests of one kind. A full limiter
// refuses at once (no queueing), as Kubernetes' max-in-flight filter does.
type inflightLimiter chan struct{}

func (l inflightLimiter) tryAcquire() bool {
	select {
	case l <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l inflightLimiter) release() { <-l }

// withInflightLimit applies the read and mutating limits to everything but
// watches and health checks.
func (s *Server) withInflightLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := parseResourcePath(r); isPublicPath(r.URL.Path) || isWatch(r) || (ok && isLongRunning(info)) {
			next.ServeHTTP(w, r)
			return
		}
		lim, kind := s.readLimit, "readOnly"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			lim, kind = s.mutatingLimit, "mutating"
		}
		if !lim.tryAcquire() {
			s.resp.writeError(w, r, apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
			return
		}
		defer lim.release()
		g := s.metrics.inflight.WithLabelValues(kind)
		g.Inc()
		defer g.Dec()
		next.ServeHTTP(w, r)
	})
}

func isWatch(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	return queryBool(r.URL.Query(), "watch") || strings.Contains(r.URL.Path, "/watch/")
}

// withRecovery turns a handler panic into a 500 Status and a log line.
func (s *Server) withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				s.resp.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("panic: %v", v)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the response code for metrics.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (sr *statusRecorder) WriteHeader(code int) {
	if sr.code == 0 {
		sr.code = code
	}
	sr.ResponseWriter.WriteHeader(code)
}

func (sr *statusRecorder) Write(b []byte) (int, error) {
	if sr.code == 0 {
		sr.code = http.StatusOK
	}
	return sr.ResponseWriter.Write(b)
}

// Flush lets watch handlers flush through the recorder.
func (sr *statusRecorder) Flush() {
	if f, ok := sr.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (sr *statusRecorder) Unwrap() http.ResponseWriter { return sr.ResponseWriter }

// instrument records request counts and latency for resource requests.
func (s *Server) instrument(info requestInfo, w http.ResponseWriter, serve func(http.ResponseWriter)) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	scope := "cluster"
	switch {
	case info.Name != "":
		scope = "resource"
	case info.Namespace != "":
		scope = "namespace"
	}
	verb := strings.ToUpper(info.Verb)
	if verb == "WATCH" {
		g := s.metrics.watchers.WithLabelValues(verb, info.Group, info.Version, info.Resource, scope)
		g.Inc()
		defer g.Dec()
	}
	serve(rec)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	s.metrics.requests.WithLabelValues(verb, info.Group, info.Version, info.Resource, info.Subresource, scope,
		strconv.Itoa(rec.code)).Inc()
	if verb != "WATCH" {
		s.metrics.latency.WithLabelValues(verb, info.Group, info.Version, info.Resource, info.Subresource, scope).
			Observe(time.Since(start).Seconds())
	}
}
