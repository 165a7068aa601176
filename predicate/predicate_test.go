package predicate_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/predicate"
)

func cm(gen int64, rv string, lbl, ann map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Generation: gen,
		ResourceVersion: rv, Labels: lbl, Annotations: ann}}
}

func upd(o, n metav1.Object) predicate.UpdateEvent {
	return predicate.UpdateEvent{ObjectOld: o, ObjectNew: n}
}

func TestChangedPredicates(t *testing.T) {
	base := cm(1, "10", map[string]string{"a": "1"}, map[string]string{"x": "1"})
	for _, tc := range []struct {
		name string
		p    predicate.Predicate
		new  *corev1.ConfigMap
		want bool
	}{
		{"generation same", predicate.GenerationChanged(), cm(1, "11", nil, nil), false},
		{"generation bumped", predicate.GenerationChanged(), cm(2, "11", nil, nil), true},
		{"labels same", predicate.LabelChanged(), cm(1, "11", map[string]string{"a": "1"}, nil), false},
		{"labels changed", predicate.LabelChanged(), cm(1, "11", map[string]string{"a": "2"}, nil), true},
		{"annotations same", predicate.AnnotationChanged(), cm(1, "11", nil, map[string]string{"x": "1"}), false},
		{"annotations removed", predicate.AnnotationChanged(), cm(1, "11", nil, nil), true},
		{"rv same", predicate.ResourceVersionChanged(), cm(5, "10", nil, nil), false},
		{"rv changed", predicate.ResourceVersionChanged(), cm(1, "11", nil, nil), true},
	} {
		if got := tc.p.Update(upd(base, tc.new)); got != tc.want {
			t.Errorf("%s: Update = %v, want %v", tc.name, got, tc.want)
		}
		// Creates and deletes always pass the "changed" predicates.
		if !tc.p.Create(predicate.CreateEvent{Object: base}) || !tc.p.Delete(predicate.DeleteEvent{Object: base}) {
			t.Errorf("%s: create/delete must pass", tc.name)
		}
		// A resync (the same object twice) never passes.
		if tc.p.Update(upd(base, base)) {
			t.Errorf("%s: resync passed", tc.name)
		}
	}
}

func TestLabelsAndTyped(t *testing.T) {
	sel, err := labels.Parse("app=web")
	if err != nil {
		t.Fatal(err)
	}
	p := predicate.Labels(sel)
	web := cm(1, "1", map[string]string{"app": "web"}, nil)
	db := cm(1, "1", map[string]string{"app": "db"}, nil)
	if !p.Create(predicate.CreateEvent{Object: web}) || p.Create(predicate.CreateEvent{Object: db}) {
		t.Fatal("Labels on create")
	}
	if !p.Update(upd(db, web)) || p.Update(upd(web, db)) {
		t.Fatal("Labels judges the new object of an update")
	}
	if p.Delete(predicate.DeleteEvent{Object: db}) {
		t.Fatal("Labels on delete")
	}
	ls, err := predicate.LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !ls.Create(predicate.CreateEvent{Object: db}) || ls.Create(predicate.CreateEvent{Object: web}) {
		t.Fatal("LabelSelector")
	}
	if _, err := predicate.LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: "Bogus"}}}); err == nil {
		t.Fatal("invalid selector accepted")
	}

	paused := predicate.Typed(func(d *appsv1.Deployment) bool { return d.Spec.Paused })
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Paused: true}}
	if !paused.Create(predicate.CreateEvent{Object: d}) {
		t.Fatal("Typed on a matching object")
	}
	if paused.Create(predicate.CreateEvent{Object: web}) {
		t.Fatal("Typed must drop objects of other types")
	}
}

func TestCombinators(t *testing.T) {
	yes, no := predicate.Funcs{}, predicate.Not(predicate.Funcs{})
	e := predicate.CreateEvent{Object: cm(1, "1", nil, nil)}
	u := upd(cm(1, "1", nil, nil), cm(1, "2", nil, nil))
	d := predicate.DeleteEvent{Object: cm(1, "1", nil, nil), DeleteStateUnknown: true}
	check := func(name string, p predicate.Predicate, want bool) {
		t.Helper()
		if p.Create(e) != want || p.Update(u) != want || p.Delete(d) != want {
			t.Errorf("%s: want %v for every event", name, want)
		}
	}
	check("Funcs{}", yes, true)
	check("Not(Funcs{})", no, false)
	check("And()", predicate.And(), true)
	check("And(yes,no)", predicate.And(yes, no), false)
	check("And(yes,yes)", predicate.And(yes, yes), true)
	check("Or()", predicate.Or(), false)
	check("Or(no,yes)", predicate.Or(no, yes), true)
	check("Or(no,no)", predicate.Or(no, no), false)

	onlyUnknown := predicate.Funcs{DeleteFunc: func(e predicate.DeleteEvent) bool { return e.DeleteStateUnknown }}
	if !onlyUnknown.Delete(d) || onlyUnknown.Delete(predicate.DeleteEvent{Object: d.Object}) {
		t.Fatal("DeleteFunc")
	}
	initial := predicate.Funcs{CreateFunc: func(e predicate.CreateEvent) bool { return !e.IsInInitialList }}
	if initial.Create(predicate.CreateEvent{Object: e.Object, IsInInitialList: true}) || !initial.Create(e) {
		t.Fatal("CreateFunc")
	}
}
