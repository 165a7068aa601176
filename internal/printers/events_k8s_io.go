package printers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// eventsTable returns the table of an events.k8s.io/v1 kind: kube-apiserver
// prints its Events as core Events, with the same columns and cells.
func eventsTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "Event" {
		return newTable(eventColumns, eventsV1Cells, now)
	}
	return nil
}

// eventsV1Cells renders an events.k8s.io/v1 Event through the core Event
// printer, with the fields that printer reads under their core names.
func eventsV1Cells(e *eventsv1.Event, now time.Time) []interface{} {
	core := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: e.Name}, InvolvedObject: e.Regarding, Reason: e.Reason, Message: e.Note,
		Source: e.DeprecatedSource, FirstTimestamp: e.DeprecatedFirstTimestamp, LastTimestamp: e.DeprecatedLastTimestamp,
		Count: e.DeprecatedCount, Type: e.Type, EventTime: e.EventTime,
		ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance,
	}
	if s := e.Series; s != nil {
		core.Series = &corev1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
	}
	return eventCells(core, now)
}
