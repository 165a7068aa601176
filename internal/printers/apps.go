package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/internal/registry"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	containersColumn = wide("Containers", "string", "Names of each container in the template.")
	imagesColumn     = wide("Images", "string", "Images referenced by each container in the template.")
	selectorColumn   = wide("Selector", "string", "Label query over the pods the object manages.")
)

// appsTable returns the table of an apps/v1 kind, nil for none.
func appsTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "Deployment":
		return newTable(deploymentColumns, deploymentCells, now)
	case "ReplicaSet":
		return newTable(replicaSetColumns, replicaSetCells, now)
	}
	return nil
}

var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Ready", "string", "Number of ready replicas out of the desired number."),
	column("Up-to-date", "integer", "Total number of non-terminated pods that have the desired template spec."),
	column("Available", "integer", "Total number of available pods (ready for at least minReadySeconds)."),
	ageColumn, containersColumn, imagesColumn, selectorColumn,
}

func deploymentCells(d *appsv1.Deployment, now time.Time) []interface{} {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	containers, images := containerCells(d.Spec.Template.Spec.Containers)
	return []interface{}{
		d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now),
		containers, images, selectorCell(d.Spec.Selector),
	}
}

var replicaSetColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Desired", "integer", "Number of desired pods."),
	column("Current", "integer", "Number of pods currently present."),
	column("Ready", "integer", "Number of ready pods."),
	ageColumn, containersColumn, imagesColumn, selectorColumn,
}

func replicaSetCells(rs *appsv1.ReplicaSet, now time.Time) []interface{} {
	desired := int32(1)
	if rs.Spec.Replicas != nil {
		desired = *rs.Spec.Replicas
	}
	containers, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []interface{}{
		rs.Name, int64(desired), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs.CreationTimestamp, now),
		containers, images, selectorCell(rs.Spec.Selector),
	}
}

// containerCells joins container names and images with commas.
func containerCells(cs []corev1.Container) (names, images string) {
	n, i := make([]string, len(cs)), make([]string, len(cs))
	for k, c := range cs {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func selectorCell(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "<invalid>"
	}
	return s.String()
}
