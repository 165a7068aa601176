package persistentvolume

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// kube-controller-manager's persistent-volume metrics: gauges counted
// from the informers' caches at each scrape, and the retroactive default
// class assignments.
var (
	totalPVDesc = prometheus.NewDesc("pv_collector_total_pv_count",
		"Gauge measuring total number of persistent volumes", []string{"plugin_name", "volume_mode"}, nil)
	boundPVDesc = prometheus.NewDesc("pv_collector_bound_pv_count",
		"Gauge measuring number of persistent volume currently bound", []string{"storage_class"}, nil)
	unboundPVDesc = prometheus.NewDesc("pv_collector_unbound_pv_count",
		"Gauge measuring number of persistent volume currently unbound", []string{"storage_class"}, nil)
	boundPVCDesc = prometheus.NewDesc("pv_collector_bound_pvc_count",
		"Gauge measuring number of persistent volume claim currently bound", []string{"namespace", "storage_class", "volume_attributes_class"}, nil)
	unboundPVCDesc = prometheus.NewDesc("pv_collector_unbound_pvc_count",
		"Gauge measuring number of persistent volume claim currently unbound", []string{"namespace", "storage_class", "volume_attributes_class"}, nil)
)

type metrics struct {
	b                          *binder
	retroactive, retroactiveKO prometheus.Counter
}

func newMetrics(b *binder, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{b: b,
		retroactive: prometheus.NewCounter(prometheus.CounterOpts{Name: "retroactive_storageclass_total",
			Help: "Total number of retroactive StorageClass assignments to persistent volume claim"}),
		retroactiveKO: prometheus.NewCounter(prometheus.CounterOpts{Name: "retroactive_storageclass_errors_total",
			Help: "Total number of failed retroactive StorageClass assignments to persistent volume claim"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m, m.retroactive, m.retroactiveKO} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{totalPVDesc, boundPVDesc, unboundPVDesc, boundPVCDesc, unboundPVCDesc} {
		ch <- d
	}
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	type pvKey struct{ plugin, mode string }
	total, bound, unbound := map[pvKey]int{}, map[string]int{}, map[string]int{}
	for _, pv := range m.b.pvInf.Indexer().List() {
		mode := corev1.PersistentVolumeFilesystem
		if pv.Spec.VolumeMode != nil {
			mode = *pv.Spec.VolumeMode
		}
		total[pvKey{pluginName(pv), string(mode)}]++
		if pv.Status.Phase == corev1.VolumeBound {
			bound[pv.Spec.StorageClassName]++
		} else {
			unbound[pv.Spec.StorageClassName]++
		}
	}
	for k, n := range total {
		ch <- prometheus.MustNewConstMetric(totalPVDesc, prometheus.GaugeValue, float64(n), k.plugin, k.mode)
	}
	for class, n := range bound {
		ch <- prometheus.MustNewConstMetric(boundPVDesc, prometheus.GaugeValue, float64(n), class)
	}
	for class, n := range unbound {
		ch <- prometheus.MustNewConstMetric(unboundPVDesc, prometheus.GaugeValue, float64(n), class)
	}
	type pvcKey struct{ ns, class, vac string }
	cbound, cunbound := map[pvcKey]int{}, map[pvcKey]int{}
	for _, c := range m.b.pvcInf.Indexer().List() {
		k := pvcKey{c.Namespace, volumeutil.ClaimClass(c), ""}
		if c.Spec.VolumeAttributesClassName != nil {
			k.vac = *c.Spec.VolumeAttributesClassName
		}
		if c.Status.Phase == corev1.ClaimBound {
			cbound[k]++
		} else {
			cunbound[k]++
		}
	}
	for k, n := range cbound {
		ch <- prometheus.MustNewConstMetric(boundPVCDesc, prometheus.GaugeValue, float64(n), k.ns, k.class, k.vac)
	}
	for k, n := range cunbound {
		ch <- prometheus.MustNewConstMetric(unboundPVCDesc, prometheus.GaugeValue, float64(n), k.ns, k.class, k.vac)
	}
}

// pluginName is the in-tree plugin name kube reports for the volume's
// source ("N/A" when it has none served).
func pluginName(pv *corev1.PersistentVolume) string {
	s := pv.Spec.PersistentVolumeSource
	switch {
	case s.HostPath != nil:
		return "kubernetes.io/host-path"
	case s.Local != nil:
		return "kubernetes.io/local-volume"
	case s.NFS != nil:
		return "kubernetes.io/nfs"
	case s.CSI != nil:
		return "kubernetes.io/csi:" + s.CSI.Driver
	}
	return "N/A"
}
