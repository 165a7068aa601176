package printers

import (
	"time"

	"github.com/setpoint-dev/setpoint/internal/registry"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The columns kube-apiserver prints for CustomResourceDefinitions.
// apiextensionsTable returns the table of an apiextensions.k8s.io/v1 kind.
func apiextensionsTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "CustomResourceDefinition" {
		return newTable(crdColumns, crdCells, now)
	}
	return nil
}

var crdColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Created At", "date", "CreationTimestamp is a timestamp representing the server time when this object was created."),
}

func crdCells(c *apiextv1.CustomResourceDefinition, _ time.Time) []interface{} {
	return []interface{}{c.Name, c.CreationTimestamp.UTC().Format(time.RFC3339)}
}
