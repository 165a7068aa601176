package printers

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The columns kube-apiserver prints for replication controllers, pod
// templates, service accounts, endpoints and component statuses.

var replicationControllerColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Desired", "integer", "The number of replicas wanted."),
	column("Current", "integer", "The number of replicas that exist."),
	column("Ready", "integer", "The number of ready replicas."),
	ageColumn,
	wide("Containers", "string", "Names of each container in the template."),
	wide("Images", "string", "Images referenced by each container in the template."),
	wide("Selector", "string", "The labels of the pods the controller manages."),
}

func replicationControllerCells(rc *corev1.ReplicationController, now time.Time) []interface{} {
	desired := int32(0)
	if rc.Spec.Replicas != nil {
		desired = *rc.Spec.Replicas
	}
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []interface{}{
		rc.Name, int64(desired), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), age(rc.CreationTimestamp, now),
		names, images, labels.FormatLabels(rc.Spec.Selector),
	}
}

var podTemplateColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Containers", "string", "Names of each container in the template."),
	column("Images", "string", "Images referenced by each container in the template."),
	column("Pod Labels", "string", "The labels for the pod template."),
}

func podTemplateCells(t *corev1.PodTemplate, _ time.Time) []interface{} {
	names, images := containerCells(t.Template.Spec.Containers)
	return []interface{}{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}
}

var serviceAccountColumns = []metav1.TableColumnDefinition{nameColumn(0), ageColumn}

func serviceAccountCells(sa *corev1.ServiceAccount, now time.Time) []interface{} {
	return []interface{}{sa.Name, age(sa.CreationTimestamp, now)}
}

var endpointsColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Endpoints", "string", "The ready addresses and ports of the endpoints."), ageColumn,
}

func endpointsCells(e *corev1.Endpoints, now time.Time) []interface{} {
	return []interface{}{e.Name, formatEndpoints(e), age(e.CreationTimestamp, now)}
}

// maxEndpoints is how many addresses the ENDPOINTS column shows.
const maxEndpoints = 3

// formatEndpoints renders the ready addresses as ip:port for each port of
// their subset (ip alone in a subset without ports), the first three, then
// "+ N more...". No subsets is "<none>"; subsets without ready addresses
// are "".
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count, more := 0, false
	add := func(s string) {
		if len(list) == maxEndpoints {
			more = true
			return
		}
		list = append(list, s)
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	s := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", s, count-maxEndpoints)
	}
	return s
}

var componentStatusColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Status", "string", "Status of the component conditions"),
	column("Message", "string", "Message of the component conditions"),
	column("Error", "string", "Error of the component conditions"),
}

// componentStatusCells shows the Healthy condition: Healthy, Unhealthy or
// Unknown when there is none.
func componentStatusCells(cs *corev1.ComponentStatus, _ time.Time) []interface{} {
	status, msg, errMsg := "Unknown", "", ""
	for _, c := range cs.Conditions {
		if c.Type == corev1.ComponentHealthy {
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			msg, errMsg = c.Message, c.Error
			break
		}
	}
	return []interface{}{cs.Name, status, msg, errMsg}
}
