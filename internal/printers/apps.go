package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
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
	case "StatefulSet":
		return newTable(statefulSetColumns, statefulSetCells, now)
	case "DaemonSet":
		return newTable(daemonSetColumns, daemonSetCells, now)
	case "ControllerRevision":
		return newTable(controllerRevisionColumns, controllerRevisionCells, now)
	}
	return nil
}

// deploymentColumns: kube-apiserver v1.37 declares Up-to-date and
// Available string columns (their cells are numbers all the same).
var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Ready", "string", "Number of ready replicas out of the desired number."),
	column("Up-to-date", "string", "Total number of non-terminated pods that have the desired template spec."),
	column("Available", "string", "Total number of available pods (ready for at least minReadySeconds)."),
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

var statefulSetColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Ready", "string", "Number of the pod with ready state"),
	ageColumn, containersColumn, imagesColumn,
}

func statefulSetCells(s *appsv1.StatefulSet, now time.Time) []interface{} {
	desired := int32(0) // kube-apiserver prints its internal type, where unset is 0
	if s.Spec.Replicas != nil {
		desired = *s.Spec.Replicas
	}
	containers, images := containerCells(s.Spec.Template.Spec.Containers)
	return []interface{}{
		s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired), age(s.CreationTimestamp, now), containers, images,
	}
}

var daemonSetColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
	column("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
	column("Ready", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
	column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod."),
	column("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available."),
	column("Node Selector", "string", "Node selector of the pods' template."),
	ageColumn, containersColumn, imagesColumn, selectorColumn,
}

func daemonSetCells(ds *appsv1.DaemonSet, now time.Time) []interface{} {
	st := &ds.Status
	containers, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []interface{}{
		ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		age(ds.CreationTimestamp, now), containers, images, metav1.FormatLabelSelector(ds.Spec.Selector),
	}
}

var controllerRevisionColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Controller", "string", "Controller of the object"),
	column("Revision", "string", "Revision indicates the revision of the state represented by Data."),
	ageColumn,
}

// controllerRevisionCells names the controller as kubectl does
// ("statefulset.apps/web"); the revision is a number in a string column,
// as kube-apiserver sends it.
func controllerRevisionCells(cr *appsv1.ControllerRevision, now time.Time) []interface{} {
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		controller = ref.Name
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
	}
	return []interface{}{cr.Name, controller, cr.Revision, age(cr.CreationTimestamp, now)}
}
