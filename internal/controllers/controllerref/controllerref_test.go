package controllerref_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	pods *rest.Resource[*corev1.Pod, *corev1.PodList]
	rss  *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

func setup(t *testing.T) (*env, context.Context) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	c := srv.RESTClient(t)
	return &env{
		pods: rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default"),
		rss:  rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c, appsv1.SchemeGroupVersion.WithResource("replicasets"), true).Namespace("default"),
	}, context.Background()
}

var rsGVK = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

func (e *env) owner(t *testing.T, ctx context.Context, name string) *appsv1.ReplicaSet {
	t.Helper()
	sel := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.ReplicaSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: sel},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}},
	}}
	rs, err := e.rss.Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func (e *env) pod(t *testing.T, ctx context.Context, name string, lbls map[string]string, refs ...metav1.OwnerReference) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls, OwnerReferences: refs},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
	p, err := e.pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ctrlRef(name string, uid types.UID) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: uid, Controller: &t}
}

func (e *env) recheck(owner *appsv1.ReplicaSet) func(context.Context) error {
	return controllerref.RecheckDeletionTimestamp(owner, func(ctx context.Context) (metav1.Object, error) {
		return e.rss.Get(ctx, owner.Name, metav1.GetOptions{})
	})
}

func names(ps []*corev1.Pod) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name)
	}
	return strings.Join(s, ",")
}

// TestClaim covers each case of the decision table against the server.
func TestClaim(t *testing.T) {
	e, ctx := setup(t)
	rs := e.owner(t, ctx, "web")
	other := e.owner(t, ctx, "other")
	match := map[string]string{"app": "web"}
	ours := e.pod(t, ctx, "ours", match, ctrlRef(rs.Name, rs.UID))
	orphan := e.pod(t, ctx, "orphan", match)
	stranger := e.pod(t, ctx, "stranger", map[string]string{"app": "x"})
	relabelled := e.pod(t, ctx, "relabelled", map[string]string{"app": "x"}, ctrlRef(rs.Name, rs.UID))
	foreign := e.pod(t, ctx, "foreign", match, ctrlRef(other.Name, other.UID))

	sel := labels.SelectorFromSet(match)
	m := controllerref.New(rs, rsGVK, sel, controllerref.PatchWith(e.pods), e.recheck(rs))
	got, err := m.Claim(ctx, []*corev1.Pod{ours, orphan, stranger, relabelled, foreign})
	if err != nil {
		t.Fatal(err)
	}
	if names(got) != "ours,orphan" {
		t.Fatalf("claimed %q, want ours,orphan", names(got))
	}
	fresh, _ := e.pods.Get(ctx, "orphan", metav1.GetOptions{})
	ref := metav1.GetControllerOf(fresh)
	if ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("orphan's controller ref after adoption: %+v", ref)
	}
	fresh, _ = e.pods.Get(ctx, "relabelled", metav1.GetOptions{})
	if len(fresh.OwnerReferences) != 0 {
		t.Fatalf("relabelled pod still has owner refs %+v", fresh.OwnerReferences)
	}
	fresh, _ = e.pods.Get(ctx, "foreign", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(fresh); ref == nil || ref.UID != other.UID {
		t.Fatalf("foreign pod's controller changed: %+v", ref)
	}
	fresh, _ = e.pods.Get(ctx, "stranger", metav1.GetOptions{})
	if len(fresh.OwnerReferences) != 0 {
		t.Fatal("non-matching orphan was adopted")
	}
}

// TestReleaseKeepsOtherRefs: releasing deletes only our reference.
func TestReleaseKeepsOtherRefs(t *testing.T) {
	e, ctx := setup(t)
	rs := e.owner(t, ctx, "web")
	keep := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	p := e.pod(t, ctx, "p", map[string]string{"app": "x"}, keep, ctrlRef(rs.Name, rs.UID))
	m := controllerref.New(rs, rsGVK, labels.SelectorFromSet(map[string]string{"app": "web"}), controllerref.PatchWith(e.pods), nil)
	if got, err := m.Claim(ctx, []*corev1.Pod{p}); err != nil || len(got) != 0 {
		t.Fatalf("claim: %v %v", got, err)
	}
	fresh, _ := e.pods.Get(ctx, "p", metav1.GetOptions{})
	if len(fresh.OwnerReferences) != 1 || fresh.OwnerReferences[0].UID != "cm-uid" {
		t.Fatalf("owner refs after release: %+v", fresh.OwnerReferences)
	}
}

// TestReplacedObjectUntouched: a pod deleted and recreated under the same
// name after the cache saw it is neither adopted nor an error.
func TestReplacedObjectUntouched(t *testing.T) {
	e, ctx := setup(t)
	rs := e.owner(t, ctx, "web")
	match := map[string]string{"app": "web"}
	old := e.pod(t, ctx, "p", match)
	if err := e.pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	e.pod(t, ctx, "p", match)
	gonePod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "never-existed", Namespace: "default", Labels: match, UID: "u"}}
	m := controllerref.New(rs, rsGVK, labels.SelectorFromSet(match), controllerref.PatchWith(e.pods), e.recheck(rs))
	got, err := m.Claim(ctx, []*corev1.Pod{old, gonePod})
	if err != nil || len(got) != 0 {
		t.Fatalf("claim of replaced/vanished pods: %v, %v", names(got), err)
	}
	fresh, _ := e.pods.Get(ctx, "p", metav1.GetOptions{})
	if len(fresh.OwnerReferences) != 0 {
		t.Fatal("the replacement pod was adopted through a stale object")
	}
}

// TestNoAdoptionByDeletedOrReplacedOwner: the uncached recheck stops
// adoption when the owner in hand is stale; a deleting owner adopts
// nothing and releases nothing.
func TestNoAdoptionByDeletedOrReplacedOwner(t *testing.T) {
	e, ctx := setup(t)
	rs := e.owner(t, ctx, "web")
	match := map[string]string{"app": "web"}
	orphan := e.pod(t, ctx, "orphan", match)
	stale := rs.DeepCopy()
	stale.UID = "an-older-incarnation"
	m := controllerref.New(stale, rsGVK, labels.SelectorFromSet(match), controllerref.PatchWith(e.pods), e.recheck(stale))
	if got, err := m.Claim(ctx, []*corev1.Pod{orphan}); err == nil || len(got) != 0 {
		t.Fatalf("stale owner adopted: %v, err %v", names(got), err)
	}

	deleting := rs.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	relabelled := e.pod(t, ctx, "relabelled", map[string]string{"app": "x"}, ctrlRef(rs.Name, rs.UID))
	calls := 0
	count := func(ctx context.Context, p *corev1.Pod, data []byte) error { calls++; return nil }
	m2 := controllerref.New(deleting, rsGVK, labels.SelectorFromSet(match), count, nil)
	got, err := m2.Claim(ctx, []*corev1.Pod{orphan, relabelled})
	if err != nil || len(got) != 0 || calls != 0 {
		t.Fatalf("deleting owner: claimed %v, err %v, %d patches", names(got), err, calls)
	}
	fresh, _ := e.pods.Get(ctx, "orphan", metav1.GetOptions{})
	if len(fresh.OwnerReferences) != 0 {
		t.Fatal("orphan adopted by a stale owner")
	}
}

// TestGenericOverReplicaSets: the same code claims ReplicaSets.
func TestGenericOverReplicaSets(t *testing.T) {
	e, ctx := setup(t)
	owner := e.owner(t, ctx, "deploy-standin")
	rs := e.owner(t, ctx, "child")
	rs.Labels = map[string]string{"tier": "a"}
	rs, err := e.rss.Update(ctx, rs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	m := controllerref.New(owner, gvk, labels.SelectorFromSet(map[string]string{"tier": "a"}), controllerref.PatchWith(e.rss), nil)
	got, err := m.Claim(ctx, []*appsv1.ReplicaSet{rs})
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	fresh, _ := e.rss.Get(ctx, "child", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(fresh); ref == nil || ref.Kind != "Deployment" || ref.UID != owner.UID {
		t.Fatalf("ref %+v", ref)
	}
}
