package apiserver

import (
	"net/http"
	"net/http/httputil"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// handleConnect forwards a request to a Connect subresource's location (a
// node's kubelet endpoint for pods/log, exec, attach and portforward; a pod
// or node for proxy), as kube-apiserver does: the response is relayed as it
// comes; a request that upgrades (SPDY or WebSocket streams) is spliced to
// the backend's connection once the backend switches protocols; anything
// else the backend answers (a 400 from a simulated node) reaches the client
// unchanged.
func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, c *registry.Connect) {
	if !slices.Contains(c.Methods, r.Method) {
		s.resp.writeError(w, r, methodNotAllowed())
		return
	}
	var opts runtime.Object
	if c.NewOptions != nil {
		opts = c.NewOptions()
		if err := decodeQueryOptions(r.URL.Query(), opts); err != nil {
			s.resp.writeError(w, r, err)
			return
		}
	}
	loc, err := c.Location(r.Context(), s.env(), s.hookRequest(r, info, false), opts)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	upgrade := r.Header.Get("Upgrade") != ""
	if upgrade && !c.Upgrade {
		s.resp.writeError(w, r, apierrors.NewBadRequest("this subresource does not support protocol upgrades"))
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc.URL
			pr.Out.Host = loc.URL.Host
			pr.Out.Header.Del("Authorization") // the client's credentials stay here
			for k, vs := range loc.Header {
				pr.Out.Header[k] = vs
			}
		},
		Transport: loc.Transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.resp.writeError(w, r, apierrors.NewServiceUnavailable("error trying to reach "+info.Subresource+" of "+info.Name+": "+err.Error()))
		},
	}
	if c.Stream {
		proxy.FlushInterval = -1 // each read is flushed at once (kubectl logs -f)
	}
	proxy.ServeHTTP(w, r)
}
