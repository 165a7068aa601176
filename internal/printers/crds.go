package printers

import (
	"sort"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/internal/registry"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// apiextensionsTable returns the table of an apiextensions.k8s.io/v1 kind.
func apiextensionsTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "CustomResourceDefinition" {
		return newTable(crdColumns, crdCells, now)
	}
	return nil
}

var crdColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Scope", "string", "Cluster/Namespaced"),
	column("Versions", "string", "Served versions"),
	column("Created At", "date", "CreationTimestamp is a timestamp representing the server time when this object was created. "+
		"It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "+
		"It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "+
		"More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"),
	wide("Group", "string", "API group"),
	wide("Kind", "string", "CustomResource kind"),
	wide("ShortNames", "string", "Short names"),
	wide("Established", "boolean", "Established status"),
}

func crdCells(c *apiextv1.CustomResourceDefinition, _ time.Time) []interface{} {
	established := false
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextv1.Established {
			established = cond.Status == apiextv1.ConditionTrue
		}
	}
	return []interface{}{
		c.Name, string(c.Spec.Scope), crdVersions(c.Spec.Versions), c.CreationTimestamp.UTC().Format(time.RFC3339),
		c.Spec.Group, c.Spec.Names.Kind, strings.Join(c.Spec.Names.ShortNames, ","), established,
	}
}

// crdVersions lists the served versions, highest Kubernetes version
// priority first, the storage version marked "(storage)": "v1(storage),v1beta1".
func crdVersions(versions []apiextv1.CustomResourceDefinitionVersion) string {
	var served []apiextv1.CustomResourceDefinitionVersion
	for _, v := range versions {
		if v.Served {
			served = append(served, v)
		}
	}
	sort.SliceStable(served, func(i, j int) bool {
		return version.CompareKubeAwareVersionStrings(served[i].Name, served[j].Name) > 0
	})
	names := make([]string, len(served))
	for i, v := range served {
		names[i] = v.Name
		if v.Storage {
			names[i] += "(storage)"
		}
	}
	return strings.Join(names, ",")
}
