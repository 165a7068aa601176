package printers

import (
	"slices"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// flowcontrolTable returns the table of a flowcontrol.apiserver.k8s.io/v1
// kind.
func flowcontrolTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "FlowSchema":
		return flowSchemaTable{newTable(flowSchemaColumns, flowSchemaCells, now)}
	case "PriorityLevelConfiguration":
		return newTable(priorityLevelColumns, priorityLevelCells, now)
	}
	return nil
}

var flowSchemaColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("PriorityLevel", "string", "The priority level requests of this schema are served at."),
	column("MatchingPrecedence", "string", "The order in which schemas are matched, lowest first."),
	column("DistinguisherMethod", "string", "How requests of this schema are told apart into flows."),
	ageColumn,
	column("MissingPL", "string", "Whether the priority level the schema refers to is missing."),
}

func flowSchemaCells(fs *flowcontrolv1.FlowSchema, now time.Time) []interface{} {
	method := "<none>"
	if fs.Spec.DistinguisherMethod != nil {
		method = string(fs.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
		age(fs.CreationTimestamp, now), missing}
}

// flowSchemaTable orders list rows as kube-apiserver does: by matching
// precedence, then by name.
type flowSchemaTable struct {
	*table[*flowcontrolv1.FlowSchema]
}

// SortRows implements registry.RowSorter.
func (flowSchemaTable) SortRows(items []runtime.Object) {
	slices.SortStableFunc(items, func(a, b runtime.Object) int {
		x, okx := a.(*flowcontrolv1.FlowSchema)
		y, oky := b.(*flowcontrolv1.FlowSchema)
		switch {
		case !okx || !oky:
			return 0
		case x.Spec.MatchingPrecedence != y.Spec.MatchingPrecedence:
			return int(x.Spec.MatchingPrecedence) - int(y.Spec.MatchingPrecedence)
		case x.Name < y.Name:
			return -1
		case x.Name > y.Name:
			return 1
		}
		return 0
	})
}

var priorityLevelColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Type", "string", "Whether requests at this level are limited or exempt."),
	column("NominalConcurrencyShares", "string", "The share of the server's concurrency this level is given."),
	column("Queues", "string", "The number of queues of this level."),
	column("HandSize", "string", "The number of queues a flow may be assigned to."),
	column("QueueLengthLimit", "string", "The number of requests a queue may hold."),
	ageColumn,
}

func priorityLevelCells(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []interface{} {
	var ncs, queues, hand, qll interface{} = "<none>", "<none>", "<none>", "<none>"
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares != nil {
			ncs = int64(*l.NominalConcurrencyShares)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			queues, hand, qll = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
		}
	}
	return []interface{}{pl.Name, string(pl.Spec.Type), ncs, queues, hand, qll, age(pl.CreationTimestamp, now)}
}
