package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newTemplate(labels map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

func newRC() *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "6"},
		Spec:       corev1.ReplicationControllerSpec{Template: newTemplate(map[string]string{"app": "web"})},
	}
}

func TestReplicationControllerDefaults(t *testing.T) {
	r := lookup(t, "replicationcontrollers")
	rc := newRC()
	rc.Status.Replicas = 3
	expectValid(t, create(r, rc))
	s := &rc.Spec
	if *s.Replicas != 1 || s.Selector["app"] != "web" || rc.Labels["app"] != "web" || rc.Status.Replicas != 0 {
		t.Errorf("defaults: replicas %d selector %v labels %v status %+v", *s.Replicas, s.Selector, rc.Labels, rc.Status)
	}
	if p := s.Template.Spec; p.RestartPolicy != corev1.RestartPolicyAlways || p.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("pod template not defaulted: %+v", p)
	}
	own := newRC()
	own.Labels = map[string]string{"mine": "x"}
	own.Spec.Selector = map[string]string{"app": "web"}
	own.Spec.Template.Labels["tier"] = "front"
	r.Strategy.Default(own)
	if own.Labels["mine"] != "x" || len(own.Spec.Selector) != 1 {
		t.Errorf("set labels or selector replaced: %v %v", own.Labels, own.Spec.Selector)
	}
	if !r.OrphanByDefault {
		t.Error("replication controllers orphan their pods by default")
	}
	expectFields(t, r, rc, fields.Set{"metadata.name": "web", "metadata.namespace": "default", "status.replicas": "0"})
}

func TestReplicationControllerValidation(t *testing.T) {
	r := lookup(t, "replicationcontrollers")
	for name, c := range map[string]struct {
		mutate func(*corev1.ReplicationController)
		want   []string
	}{
		"negative":    {func(rc *corev1.ReplicationController) { rc.Spec.Replicas = new(int32(-1)) }, []string{"spec.replicas:FieldValueInvalid"}},
		"min ready":   {func(rc *corev1.ReplicationController) { rc.Spec.MinReadySeconds = -1 }, []string{"spec.minReadySeconds:FieldValueInvalid"}},
		"no template": {func(rc *corev1.ReplicationController) { rc.Spec.Template = nil }, []string{"spec.selector:FieldValueRequired", "spec.template:FieldValueRequired"}},
		"mismatch": {func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "other"} },
			[]string{"spec.template.metadata.labels:FieldValueInvalid"}},
		"restart policy": {func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		},
			[]string{"spec.template.spec.restartPolicy:FieldValueNotSupported"}},
		"deadline": {func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.ActiveDeadlineSeconds = new(int64(5)) },
			[]string{"spec.template.spec.activeDeadlineSeconds:FieldValueForbidden"}},
		"template label": {func(rc *corev1.ReplicationController) { rc.Spec.Template.Labels["a b"] = "c" },
			[]string{"metadata.labels:FieldValueInvalid", "spec.template.labels:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			rc := newRC()
			c.mutate(rc)
			expectErrors(t, create(r, rc), c.want...)
		})
	}
	// As kube-apiserver: the length limit of the name is worded in bytes.
	rc := newRC()
	rc.Name = strings.Repeat("a", 254)
	if errs := create(r, rc); len(errs) != 1 || errs[0].Detail != "must be no more than 253 bytes" {
		t.Errorf("a long name: %v", errs)
	}
}

func TestReplicationControllerStatusAndScale(t *testing.T) {
	r := lookup(t, "replicationcontrollers")
	old := newRC()
	expectValid(t, create(r, old))
	st := old.DeepCopy()
	st.Spec.Replicas = new(int32(9))
	st.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 4, FullyLabeledReplicas: -1}
	expectErrors(t, updateStatus(r, st, old), "status.fullyLabeledReplicas:FieldValueInvalid",
		"status.readyReplicas:FieldValueInvalid", "status.availableReplicas:FieldValueInvalid", "status.availableReplicas:FieldValueInvalid")
	if *st.Spec.Replicas != 1 {
		t.Error("status update changed the spec")
	}
	spec, status, sel, err := r.Scale.Replicas(old)
	if err != nil || spec != 1 || status != 0 || sel != "app=web" {
		t.Errorf("scale: %d %d %q %v", spec, status, sel, err)
	}
	if err := r.Scale.SetReplicas(old, 4); err != nil || *old.Spec.Replicas != 4 {
		t.Errorf("set replicas: %v %d", err, *old.Spec.Replicas)
	}
	if got := r.Strategy.(registry.WarningsStrategy).WarningsOnCreate(&corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}); len(got) != 1 {
		t.Errorf("warnings for a name that is no DNS label: %q", got)
	}
}

func TestPodTemplate(t *testing.T) {
	r := lookup(t, "podtemplates")
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "tmpl", Namespace: "default", ResourceVersion: "7"},
		Template:   *newTemplate(map[string]string{"app": "x"}),
	}
	expectValid(t, create(r, pt))
	if pt.Template.Spec.DNSPolicy != corev1.DNSClusterFirst {
		t.Errorf("template not defaulted: %+v", pt.Template.Spec)
	}
	bad := pt.DeepCopy()
	bad.Template.Labels["a b"] = "x"
	bad.Template.Annotations = map[string]string{"a b": "x"}
	bad.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "i"}}}
	expectErrors(t, create(r, bad), "template.labels:FieldValueInvalid", "template.annotations:FieldValueInvalid",
		"template.spec.ephemeralContainers:FieldValueForbidden")
	upd := pt.DeepCopy()
	upd.Template.Spec.Containers = nil
	expectErrors(t, update(r, upd, pt), "template.spec.containers:FieldValueRequired")
	if r.NoGeneration || !r.ReturnDeletedObject {
		t.Errorf("pod templates keep a generation and answer a delete with the object")
	}
}
