package printers

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// coordinationTable returns the table of a coordination.k8s.io/v1 kind.
func coordinationTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "Lease" {
		return newTable(leaseColumns, leaseCells, now)
	}
	return nil
}

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Holder", "string", "The current holder of the lease."), ageColumn,
}

func leaseCells(l *coordinationv1.Lease, now time.Time) []interface{} {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []interface{}{l.Name, holder, age(l.CreationTimestamp, now)}
}
