package printers

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// policyTable returns the table of a policy/v1 kind, nil for none.
func policyTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "PodDisruptionBudget" {
		return newTable(pdbColumns, pdbCells, now)
	}
	return nil
}

var pdbColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Min Available", "string", "The minimum number of pods that must be available."),
	column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
	column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
	ageColumn,
}

func pdbCells(p *policyv1.PodDisruptionBudget, now time.Time) []interface{} {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if p.Spec.MinAvailable != nil {
		minAvailable = p.Spec.MinAvailable.String()
	}
	if p.Spec.MaxUnavailable != nil {
		maxUnavailable = p.Spec.MaxUnavailable.String()
	}
	return []interface{}{p.Name, minAvailable, maxUnavailable, int64(p.Status.DisruptionsAllowed), age(p.CreationTimestamp, now)}
}
