package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var eventColumns = []metav1.TableColumnDefinition{
	column("Last Seen", "string", "Time since the event was last seen."),
	column("Type", "string", "Type of the event (Normal, Warning)."),
	column("Reason", "string", "Short reason for the event."),
	column("Object", "string", "The object the event is about."),
	wide("Subobject", "string", "The part of the object the event is about."),
	wide("Source", "string", "The component that reported the event."),
	column("Message", "string", "Human-readable description of the event."),
	wide("First Seen", "string", "Time since the event was first seen."),
	wide("Count", "string", "Number of times the event occurred."),
	nameColumn(1),
}

func eventCells(e *corev1.Event, now time.Time) []interface{} {
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1 // events of the events.k8s.io API have no count when single
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []interface{}{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, eventSource(e),
		strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}

// eventSource renders "component, host", falling back to the reporting
// controller and instance.
func eventSource(e *corev1.Event) string {
	component, host := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if host == "" {
		host = e.ReportingInstance
	}
	if host == "" {
		return component
	}
	return fmt.Sprintf("%s, %s", component, host)
}
