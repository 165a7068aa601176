package printers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// apiregistrationTable returns the table of an apiregistration.k8s.io/v1
// kind, nil for none.
func apiregistrationTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "APIService" {
		return newTable(apiServiceColumns, apiServiceCells, now)
	}
	return nil
}

var apiServiceColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Service", "string", "The reference to the service that hosts this API endpoint."),
	column("Available", "string", "Whether this service is available."),
	ageColumn,
}

// apiServiceCells: the service as namespace/name ("Local" for none), and
// the Available condition: True, else its status with the reason in
// parentheses ("False (ServiceNotFound)"), Unknown when there is none.
func apiServiceCells(s *apiregv1.APIService, now time.Time) []interface{} {
	service := "Local"
	if svc := s.Spec.Service; svc != nil {
		service = svc.Namespace + "/" + svc.Name
	}
	available := "Unknown"
	for _, c := range s.Status.Conditions {
		if c.Type != apiregv1.Available {
			continue
		}
		available = string(c.Status)
		if c.Status != apiregv1.ConditionTrue && c.Reason != "" {
			available += " (" + c.Reason + ")"
		}
		break
	}
	return []interface{}{s.Name, service, available, age(s.CreationTimestamp, now)}
}
