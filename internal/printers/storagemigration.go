package printers

import (
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// storagemigrationTable returns the table of a storagemigration.k8s.io/v1
// kind, nil for none.
func storagemigrationTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "StorageVersionMigration" {
		return newTable(storageVersionMigrationColumns, storageVersionMigrationCells, now)
	}
	return nil
}

// storageVersionMigrationColumns are kube-apiserver's: its Name column has
// no "name" format, and there is no Age.
var storageVersionMigrationColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Description: "Name must be unique within a namespace."},
	column("Resource", "string", "The resource being migrated (resource.group)."),
	column("Status", "string", "The state of the migration: the last of Running, Succeeded and Failed that is true, else Unknown."),
}

func storageVersionMigrationCells(m *svmv1.StorageVersionMigration, _ time.Time) []interface{} {
	status := "Unknown"
	for _, c := range m.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch svmv1.MigrationConditionType(c.Type) {
		case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
			status = c.Type
		}
	}
	return []interface{}{m.Name, m.Spec.Resource.String(), status}
}
