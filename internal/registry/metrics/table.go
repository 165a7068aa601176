package metrics

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// usageTable renders NodeMetrics and PodMetrics as metrics-server does:
// Name, cpu, memory (a pod's summed over its containers), Window.
type usageTable struct{}

func (usageTable) Columns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
		{Name: "cpu", Type: "string", Format: "quantity"},
		{Name: "memory", Type: "string", Format: "quantity"},
		{Name: "Window", Type: "string", Format: "duration"},
	}
}

func (usageTable) Cells(obj runtime.Object) ([]interface{}, error) {
	var name string
	var window metav1.Duration
	usage := corev1.ResourceList{}
	switch m := obj.(type) {
	case *metricsv1beta1.NodeMetrics:
		name, window, usage = m.Name, m.Window, m.Usage
	case *metricsv1beta1.PodMetrics:
		name, window = m.Name, m.Window
		for _, c := range m.Containers {
			for k, v := range c.Usage {
				sum := usage[k]
				sum.Add(v)
				usage[k] = sum
			}
		}
	default:
		return nil, fmt.Errorf("metrics: table of %T", obj)
	}
	cpu, mem := usage[corev1.ResourceCPU], usage[corev1.ResourceMemory]
	return []interface{}{name, cpu.String(), mem.String(), window.Duration.String()}, nil
}
