package aggregator

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// discoveryTimeout bounds a proxied discovery request
// (/apis/<group>/<version>), as kube-apiserver's proxy does.
const discoveryTimeout = 5 * time.Second

// ServeProxy forwards r, a request under /apis/<group>/<version> of gv
// that the server authenticated as user and authorized, to the
// APIService's service. It reports false, writing nothing, when gv is not
// proxied (Serves).
func (a *Aggregator) ServeProxy(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, user registry.UserInfo) bool {
	b := a.lookup(gv)
	if b == nil {
		return false
	}
	switch {
	case !b.avail:
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return true
	case b.rtErr != nil:
		http.Error(w, b.rtErr.Error(), http.StatusInternalServerError)
		return true
	}
	svc := b.spec.Service
	host, err := a.cfg.Resolver.ResolveEndpoint(r.Context(), svc.Namespace, svc.Name, *svc.Port)
	if err != nil {
		a.cfg.Logger.Info("aggregated API service unreachable", "apiservice", b.name, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return true
	}
	target := &url.URL{Scheme: "https", Host: host, Path: r.URL.Path, RawQuery: r.URL.Query().Encode()}
	ctx := r.Context()
	if len(strings.Split(strings.Trim(r.URL.Path, "/"), "/")) == 3 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
		defer cancel()
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			dropCredentials(pr.Out.Header)
			setUserHeaders(pr.Out.Header, user)
			pr.SetXForwarded()
		},
		Transport:     b.rt.rt,
		FlushInterval: -1, // watches: every event as it comes
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			// kube-aggregator's responder: the error as plain text, 503.
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
	return true
}

// dropCredentials removes what authenticated the client to this server:
// the aggregated server trusts only the front-proxy certificate and the
// X-Remote-* headers set after.
func dropCredentials(h http.Header) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "impersonate-") {
			delete(h, k)
		}
	}
}
