package printers

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// nodeTable returns the table of a node.k8s.io/v1 kind.
func nodeTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "RuntimeClass" {
		return newTable(runtimeClassColumns, runtimeClassCells, now)
	}
	return nil
}

var runtimeClassColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Handler", "string", "The container runtime handler of the class."), ageColumn,
}

func runtimeClassCells(rc *nodev1.RuntimeClass, now time.Time) []interface{} {
	return []interface{}{rc.Name, rc.Handler, age(rc.CreationTimestamp, now)}
}
