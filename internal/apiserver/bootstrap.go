package apiserver

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// bootstrap creates the objects the resources say exist from the start
// (registry.Resource.Bootstrap) when they are missing, resource by resource
// in table order (namespaces first); a restart finds them in storage and
// leaves them, unless the resource reconciles them (registry.Resource.
// Reconcile; see reconcile.go). A bootstrap object of a kind with a status subresource that
// carries a status (a Ready condition) gets it written after the create,
// which resets status, as kube-apiserver's controllers write it.
func (s *Server) bootstrap(ctx context.Context) error {
	for _, res := range s.table.builtin {
		if res.Bootstrap == nil {
			continue
		}
		e := s.entry(res.GVR())
		for _, obj := range res.Bootstrap() {
			m := objectMeta(obj)
			if _, err := e.store.Get(ctx, m.GetNamespace(), m.GetName()); err == nil {
				if res.Reconcile != nil {
					if err := reconcileBootstrap(ctx, e.store, res, obj); err != nil {
						return err
					}
				}
				continue
			} else if !apierrors.IsNotFound(err) {
				return fmt.Errorf("read %s %s: %w", res.Resource, m.GetName(), err)
			}
			status, hasStatus := bootstrapStatus(res, obj)
			if _, err := e.store.Create(ctx, m.GetNamespace(), obj, objects.WriteOptions{}); err != nil {
				if apierrors.IsAlreadyExists(err) {
					continue
				}
				return fmt.Errorf("create %s %s: %w", res.Resource, m.GetName(), err)
			}
			if !hasStatus {
				continue
			}
			setStatus := func(cur runtime.Object) error {
				reflect.ValueOf(cur).Elem().FieldByName("Status").Set(status)
				return nil
			}
			if _, err := e.store.Mutate(ctx, m.GetNamespace(), m.GetName(), setStatus, objects.WriteOptions{}); err != nil {
				return fmt.Errorf("write status of %s %s: %w", res.Resource, m.GetName(), err)
			}
		}
	}
	return nil
}

// bootstrapStatus returns a copy of the status of a bootstrap object of a
// kind with a status subresource, ok false when it has none to write.
func bootstrapStatus(res *registry.Resource, obj runtime.Object) (reflect.Value, bool) {
	if res.Status == nil || res.Unstructured {
		return reflect.Value{}, false
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	st := v.Elem().FieldByName("Status")
	if !st.IsValid() || st.IsZero() {
		return reflect.Value{}, false
	}
	cp := reflect.New(st.Type()).Elem()
	cp.Set(st)
	return cp, true
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
			continue // not stored (registry.Virtual)
		}
		s.metrics.storageObjects.WithLabelValues(gvr.GroupResource().String()).Set(float64(e.cache.Metrics().Objects))
	}
}
