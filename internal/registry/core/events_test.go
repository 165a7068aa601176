package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func newEvent() *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.17a2b", Namespace: "default", ResourceVersion: "3"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: "u1",
			APIVersion: "v1", ResourceVersion: "12", FieldPath: "spec.containers{app}"},
		Reason: "Pulled", Type: corev1.EventTypeNormal, Message: "pulled",
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
	}
}

func TestEvent(t *testing.T) {
	r := lookup(t, "events")
	expectValid(t, create(r, newEvent()))
	for name, c := range map[string]struct {
		mutate func(*corev1.Event)
		want   []string
	}{
		"other namespace":           {func(e *corev1.Event) { e.InvolvedObject.Namespace = "kube-system" }, []string{"involvedObject.namespace:FieldValueInvalid"}},
		"cluster object in default": {func(e *corev1.Event) { e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "node-1"} }, nil},
		"cluster object elsewhere": {func(e *corev1.Event) {
			e.Namespace, e.InvolvedObject = "team", corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, []string{"involvedObject.namespace:FieldValueInvalid"}},
		"new-style in kube-system": {func(e *corev1.Event) {
			e.Namespace, e.InvolvedObject = "kube-system", corev1.ObjectReference{Kind: "Node", Name: "node-1"}
			e.EventTime = metav1.NowMicro()
			e.ReportingController, e.ReportingInstance, e.Action = "example.com/c", "i", "Pulling"
		}, nil},
		"new-style elsewhere": {func(e *corev1.Event) {
			e.Namespace, e.EventTime = "team", metav1.NowMicro()
			e.ReportingController, e.ReportingInstance, e.Action = "example.com/c", "i", "Pulling"
		}, nil},
		// As kube-apiserver: an event with an eventTime names its reporter
		// (at "source" in core/v1), instance, action and reason.
		"new-style without reporter": {func(e *corev1.Event) { e.EventTime, e.Reason = metav1.NowMicro(), "" },
			[]string{"source:FieldValueRequired", "source:FieldValueInvalid", "source:FieldValueInvalid",
				"reportingInstance:FieldValueRequired", "action:FieldValueRequired", "reason:FieldValueRequired"}},
		"new-style action too long": {func(e *corev1.Event) {
			e.EventTime = metav1.NowMicro()
			e.ReportingController, e.ReportingInstance, e.Action = "example.com/c", "i", strings.Repeat("a", 129)
		}, []string{"action:FieldValueInvalid"}},
		// Any name that is a path segment, as kube-apiserver.
		"name not a subdomain": {func(e *corev1.Event) { e.Name = "Bad_Name!" }, nil},
		"name a dot":           {func(e *corev1.Event) { e.Name = "." }, []string{"metadata.name:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEvent()
			c.mutate(e)
			expectErrors(t, create(r, e), c.want...)
		})
	}

	old := newEvent()
	e := old.DeepCopy()
	e.Count = 2
	expectValid(t, update(r, e, old))

	expectFields(t, r, old, fields.Set{
		"metadata.name": "web.17a2b", "metadata.namespace": "default",
		"involvedObject.kind": "Pod", "involvedObject.namespace": "default", "involvedObject.name": "web",
		"involvedObject.uid": "u1", "involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "12",
		"involvedObject.fieldPath": "spec.containers{app}", "reason": "Pulled", "reportingComponent": "",
		"source": "kubelet", "type": "Normal",
	})
}
