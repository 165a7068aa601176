package events

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func newEvent() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		EventTime:  metav1.NewMicroTime(metav1.Now().Time), ReportingController: "example.com/c", ReportingInstance: "c-1",
		Action: "Scale", Reason: "Scaled", Note: "up", Type: "Normal",
		Regarding:        corev1.ObjectReference{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "u"},
		Related:          &corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-1"},
		Series:           &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()},
		DeprecatedSource: corev1.EventSource{Component: "kubelet", Host: "n1"}, DeprecatedCount: 4,
		DeprecatedFirstTimestamp: metav1.Now(), DeprecatedLastTimestamp: metav1.Now(),
	}
}

// TestConversionRoundTrips: every field of either version survives a
// round trip through the other, under Kubernetes' names.
func TestConversionRoundTrips(t *testing.T) {
	e := newEvent()
	core := ToCore(e)
	if core.Message != "up" || core.InvolvedObject.Name != "web" || core.Source.Component != "kubelet" || core.Count != 4 ||
		core.Series.Count != 2 || core.ReportingController != "example.com/c" || core.Related.Name != "web-1" {
		t.Errorf("core form = %+v", core)
	}
	back := FromCore(core)
	back.TypeMeta = e.TypeMeta
	if !apiequality.Semantic.DeepEqual(back, e) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, e)
	}
	core.Name = "changed"
	if e.Name != "e" {
		t.Error("ToCore shares memory with its input")
	}
}

func TestEventValidation(t *testing.T) {
	r := lookup(t, "events")
	expectValid(t, create(r, func() *eventsv1.Event {
		e := newEvent()
		e.Series, e.DeprecatedSource, e.DeprecatedCount = nil, corev1.EventSource{}, 0
		e.DeprecatedFirstTimestamp, e.DeprecatedLastTimestamp = metav1.Time{}, metav1.Time{}
		return e
	}()))
	bad := newEvent()
	bad.ReportingController, bad.Action = "", ""
	// An empty controller is both missing and not a qualified name (twice),
	// as kube-apiserver reports it.
	expectErrors(t, create(r, bad), "reportingController:FieldValueRequired", "reportingController:FieldValueInvalid",
		"reportingController:FieldValueInvalid", "action:FieldValueRequired",
		"firstTimestamp:FieldValueInvalid", "lastTimestamp:FieldValueInvalid", "count:FieldValueInvalid", "source:FieldValueInvalid")
	old := newEvent()
	upd := old.DeepCopy()
	upd.Note = "changed"
	upd.Series.Count = 3
	expectErrors(t, update(r, upd, old), "message:FieldValueInvalid")
	expectFields(t, r, old, fields.Set{"metadata.name": "e", "metadata.namespace": "ns",
		"regarding.kind": "Deployment", "regarding.namespace": "ns", "regarding.name": "web", "regarding.uid": "u",
		"regarding.apiVersion": "", "regarding.resourceVersion": "", "regarding.fieldPath": "",
		"reason": "Scaled", "reportingController": "example.com/c", "type": "Normal"})
}

// TestLegacyValidation: an Event with an eventTime written through
// core/v1 must still name its reporter, action and reason.
func TestLegacyValidation(t *testing.T) {
	e := ToCore(newEvent())
	e.Action, e.ReportingInstance = "", ""
	var got []string
	for _, err := range ValidateLegacy(e) {
		got = append(got, err.Field)
	}
	if len(got) != 2 || got[0] != "reportingInstance" || got[1] != "action" {
		t.Errorf("errors on %v, want reportingInstance and action", got)
	}
}
