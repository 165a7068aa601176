package printers

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// schedulingTable returns the table of a scheduling.k8s.io/v1 kind.
func schedulingTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "PriorityClass" {
		return newTable(priorityClassColumns, priorityClassCells, now)
	}
	return nil
}

var priorityClassColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Value", "integer", "The priority pods of this class get."),
	column("Global-Default", "boolean", "Whether this class is the default of pods that name none."),
	ageColumn,
	// kube-apiserver lists it last and at priority 0, though it is filled
	// for wide output only: the server always renders wide.
	column("PreemptionPolicy", "string", "Whether pods of this class may preempt pods of lower priority."),
}

func priorityClassCells(pc *schedulingv1.PriorityClass, now time.Time) []interface{} {
	policy := ""
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}
}
