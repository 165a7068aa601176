package cache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podGR = schema.GroupResource{Resource: "pods"}

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, ObjectKey(p.Namespace, p.Name))
	}
	slices.Sort(out)
	return out
}

func TestLister(t *testing.T) {
	pods := []*corev1.Pod{
		newPod("a", "web-1", labeled("app", "web")),
		newPod("a", "db-1", labeled("app", "db")),
		newPod("b", "web-2", labeled("app", "web")),
	}
	gr := schema.GroupResource{Resource: "pods"}
	withIndex := NewObjectIndexer[*corev1.Pod](nil)
	noIndex := NewIndexer(MetaNamespaceKeyFunc[*corev1.Pod], nil)
	for _, s := range []*ThreadSafeIndexer[*corev1.Pod]{withIndex, noIndex} {
		if err := s.Replace(pods, "5"); err != nil {
			t.Fatal(err)
		}
	}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	for name, s := range map[string]*ThreadSafeIndexer[*corev1.Pod]{"indexed": withIndex, "scan": noIndex} {
		t.Run(name, func(t *testing.T) {
			l := NewLister(s, gr)
			got, _ := l.List(web)
			if want := []string{"a/web-1", "b/web-2"}; !slices.Equal(names(got), want) {
				t.Errorf("List(app=web) = %v, want %v", names(got), want)
			}
			got, _ = l.List(labels.Everything())
			if len(got) != 3 {
				t.Errorf("List(everything) = %v", names(got))
			}
			got, _ = l.Namespace("a").List(nil)
			if want := []string{"a/db-1", "a/web-1"}; !slices.Equal(names(got), want) {
				t.Errorf("Namespace(a).List = %v, want %v", names(got), want)
			}
			got, _ = l.Namespace("a").List(web)
			if want := []string{"a/web-1"}; !slices.Equal(names(got), want) {
				t.Errorf("Namespace(a).List(app=web) = %v, want %v", names(got), want)
			}
			got, _ = l.Namespace("zz").List(nil)
			if got == nil || len(got) != 0 {
				t.Errorf("empty namespace = %#v, want empty non-nil", got)
			}
			p, err := l.Namespace("b").Get("web-2")
			if err != nil || p.Name != "web-2" {
				t.Errorf("Get(b/web-2) = %v, %v", p, err)
			}
			_, err = l.Namespace("b").Get("web-1")
			if !apierrors.IsNotFound(err) {
				t.Fatalf("Get(b/web-1) err = %v, want NotFound", err)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Details.Name != "web-1" || status.Details.Kind != "pods" || status.Code != 404 {
				t.Errorf("NotFound details = %+v", status.Details)
			}
		})
	}
}

func TestListerClusterScoped(t *testing.T) {
	s := NewObjectIndexer[*corev1.Node](nil)
	n := &corev1.Node{}
	n.Name = "n1"
	if err := s.Add(n); err != nil {
		t.Fatal(err)
	}
	l := NewLister(s, schema.GroupResource{Resource: "nodes"})
	if got, err := l.Get("n1"); err != nil || got != n {
		t.Fatalf("Get(n1) = %v, %v", got, err)
	}
	if _, err := l.Get("n2"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get(n2) = %v, want NotFound", err)
	}
}
