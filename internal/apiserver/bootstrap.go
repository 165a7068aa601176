package apiserver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/objects"
)

// bootstrap creates the objects the resources say exist from the start
// (registry.Resource.Bootstrap) when they are missing, resource by resource
// in table order (namespaces first); a restart finds them in storage and
// leaves them.
func (s *Server) bootstrap(ctx context.Context) error {
	for _, res := range s.table.builtin {
		if res.Bootstrap == nil {
			continue
		}
		e := s.entry(res.GVR())
		for _, obj := range res.Bootstrap() {
			m := objectMeta(obj)
			if _, err := e.store.Get(ctx, m.GetNamespace(), m.GetName()); err == nil {
				continue
			} else if !apierrors.IsNotFound(err) {
				return fmt.Errorf("read %s %s: %w", res.Resource, m.GetName(), err)
			}
			if _, err := e.store.Create(ctx, m.GetNamespace(), obj, objects.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create %s %s: %w", res.Resource, m.GetName(), err)
			}
		}
	}
	return nil
}

// compactLoop compacts storage every interval to the revision seen one
// interval earlier, so at least one interval of history stays available
// for watches and continue tokens (Kubernetes does the same with etcd).
func (s *Server) compactLoop(ctx context.Context) {
	if s.cfg.CompactionInterval < 0 {
		return
	}
	var prev int64
	t := s.cfg.Clock.NewTicker(s.cfg.CompactionInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if prev > 0 {
			if err := s.cfg.Storage.Compact(ctx, prev); err != nil && ctx.Err() == nil {
				s.log.Warn("compaction failed", "revision", prev, "err", err)
			} else {
				s.log.Debug("compacted storage", "revision", prev)
			}
		}
		cur, err := s.cfg.Storage.CurrentRevision(ctx)
		if err == nil {
			prev = cur
		}
	}
}

// storageMetricsLoop refreshes the storage gauges.
func (s *Server) storageMetricsLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		s.refreshStorageMetrics(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

func (s *Server) refreshStorageMetrics(ctx context.Context) {
	if st, err := s.cfg.Storage.Stats(ctx); err == nil {
		s.metrics.storageSize.Set(float64(st.SizeBytes))
	}
	if rev, err := s.cfg.Storage.CurrentRevision(ctx); err == nil {
		s.metrics.storageRevision.Set(float64(rev))
	}
	for gvr, e := range s.table.load() {
		if e.cache == nil {
			continue // not stored
		}
		s.metrics.storageObjects.WithLabelValues(gvr.GroupResource().String()).Set(float64(e.cache.Metrics().Objects))
	}
}
