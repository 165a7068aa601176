package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/objects"
)

// systemNamespaces exist in every Kubernetes cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// bootstrap creates the system namespaces and the kubernetes service when
// they are missing (a restart finds them in storage and leaves them).
func (s *Server) bootstrap(ctx context.Context) error {
	nsEntry := s.entry(corev1.SchemeGroupVersion.WithResource("namespaces"))
	for _, name := range systemNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := nsEntry.store.Create(ctx, "", ns, objects.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	svcEntry := s.entry(corev1.SchemeGroupVersion.WithResource("services"))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: kubernetesService,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt32(6443)}},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	if _, err := svcEntry.store.Get(ctx, "default", "kubernetes"); apierrors.IsNotFound(err) {
		if _, err := svcEntry.store.Create(ctx, "default", svc, objects.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the kubernetes service: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("read the kubernetes service: %w", err)
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
		s.metrics.storageObjects.WithLabelValues(gvr.GroupResource().String()).Set(float64(e.cache.Metrics().Objects))
	}
}
