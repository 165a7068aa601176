package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/aggregator"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

// newAggregator builds the aggregator of APIServices with a service
// (package aggregator), when the server serves APIServices.
func (s *Server) newAggregator() error {
	if s.entry(apiregv1.SchemeGroupVersion.WithResource("apiservices")) == nil {
		return nil
	}
	var cert *tls.Certificate
	if s.cfg.ProxyClientCertFile != "" || s.cfg.ProxyClientKeyFile != "" {
		c, err := tls.LoadX509KeyPair(s.cfg.ProxyClientCertFile, s.cfg.ProxyClientKeyFile)
		if err != nil {
			return fmt.Errorf("proxy client certificate: %w", err)
		}
		cert = &c
	}
	agg, err := aggregator.New(aggregator.Config{
		Env: s.env(), Resolver: webhookclient.EnvResolver(s.env()), ProxyClientCert: cert,
		Local: s.servesGroupVersion, ResyncInterval: s.cfg.AggregatorResyncInterval,
		OnChange: s.publishAggregated, Logger: s.log.With("component", "aggregator"), Clock: s.cfg.Clock,
	})
	if err != nil {
		return err
	}
	s.agg = agg
	return nil
}

// servesGroupVersion reports whether a resource of gv is served here.
func (s *Server) servesGroupVersion(gv schema.GroupVersion) bool {
	for gvr := range s.table.load() {
		if gvr.GroupVersion() == gv {
			return true
		}
	}
	return false
}

// publishAggregated puts the aggregated group-versions into OpenAPI and
// then discovery: a client that finds a group-version in discovery finds
// its OpenAPI document too (kubectl reads them in that order).
func (s *Server) publishAggregated() {
	if err := s.oapi.SetAggregated(s.agg.OpenAPI()); err != nil {
		s.log.Error("aggregated OpenAPI", "err", err)
	}
	if err := s.disc.SetAggregated(s.agg.Discovery()); err != nil {
		s.log.Error("aggregated discovery", "err", err)
	}
}

// serveAggregated proxies a request under /apis/<group>/<version> of an
// aggregated group-version; it reports false when gv is not one.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, parts []string) bool {
	if s.agg == nil || len(parts) < 3 || parts[0] != "apis" {
		return false
	}
	gv := schema.GroupVersion{Group: parts[1], Version: parts[2]}
	if !s.agg.Serves(gv) {
		return false
	}
	ctx := r.Context()
	if info, ok := parseResourcePath(r); !ok || (info.Verb != "watch" && !isLongRunning(info)) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	return s.agg.ServeProxy(w, r.WithContext(ctx), gv, registry.UserFrom(r.Context()))
}

// runAggregator runs the aggregator's loop, triggered by every change of
// APIServices, Services and EndpointSlices.
func (s *Server) runAggregator(ctx context.Context) {
	if s.agg == nil {
		return
	}
	for _, gvr := range []schema.GroupVersionResource{
		apiregv1.SchemeGroupVersion.WithResource("apiservices"),
		corev1.SchemeGroupVersion.WithResource("services"),
		discoveryv1.SchemeGroupVersion.WithResource("endpointslices"),
	} {
		if e := s.entry(gvr); e != nil && e.cache != nil {
			go s.triggerOnChange(ctx, e.cache, s.agg.Trigger)
		}
	}
	s.agg.Run(ctx)
}

// triggerOnChange calls trigger on every event of a watch cache after its
// current state, until ctx ends.
func (s *Server) triggerOnChange(ctx context.Context, c *watchcache.Cache, trigger func()) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, watchcache.WatchOptions{Mode: watchcache.InitialEvents, BufferSize: 1000})
		if err == nil {
			for range w.Frames() {
				trigger()
			}
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
