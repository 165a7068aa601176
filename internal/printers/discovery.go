package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// discoveryTable returns the table of a discovery.k8s.io/v1 kind.
func discoveryTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "EndpointSlice" {
		return newTable(endpointSliceColumns, endpointSliceCells, now)
	}
	return nil
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("AddressType", "string", "The type of the addresses of the slice."),
	column("Ports", "string", "The ports of the endpoints."),
	column("Endpoints", "string", "The addresses of the endpoints."),
	ageColumn,
}

func endpointSliceCells(s *discoveryv1.EndpointSlice, now time.Time) []interface{} {
	var ports []string
	for _, p := range s.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addrs []string
	for _, ep := range s.Endpoints {
		addrs = append(addrs, ep.Addresses...)
	}
	return []interface{}{s.Name, string(s.AddressType), firstThree(ports), firstThree(addrs), age(s.CreationTimestamp, now)}
}

// firstThree joins up to three items with commas, telling how many more
// there are ("a,b,c + 2 more..."), "<unset>" for none.
func firstThree(items []string) string {
	switch {
	case len(items) == 0:
		return "<unset>"
	case len(items) > 3:
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:3], ","), len(items)-3)
	}
	return strings.Join(items, ",")
}
