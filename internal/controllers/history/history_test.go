package history

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// kubeRevision is the data of a StatefulSet revision that
// kube-controller-manager v1.34 wrote for a set named "test" with
// status.collisionCount 0 (Kubernetes' statefulset compatibility test
// data); it named the revision test-776999688b.
const kubeRevision = `{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}`

func TestHashMatchesKubernetes(t *testing.T) {
	zero := int32(0)
	if got := Hash([]byte(kubeRevision), &zero); got != "776999688b" {
		t.Fatalf("Hash = %q, want 776999688b", got)
	}
	if Hash([]byte(kubeRevision), nil) == Hash([]byte(kubeRevision), &zero) {
		t.Fatal("a nil collision count hashes like 0")
	}
	owner := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "test", Namespace: "default", UID: "u1"}}
	rev := NewRevision(owner, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), map[string]string{"app": "foo"}, []byte(kubeRevision), 2, &zero)
	if rev.Name != "test-776999688b" || rev.Labels[HashLabel] != "776999688b" || rev.Labels["app"] != "foo" || rev.Revision != 2 {
		t.Fatalf("revision %s labels %v revision %d", rev.Name, rev.Labels, rev.Revision)
	}
	ref := metav1.GetControllerOf(rev)
	if ref == nil || ref.Kind != "StatefulSet" || ref.UID != "u1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("controller ref %+v", ref)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if n := Name(string(long), "h"); len(n) != 225 {
		t.Fatalf("name of %d bytes, want 225", len(n))
	}
}

func TestSortAndNext(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(100, 0))
	t1 := metav1.NewTime(time.Unix(200, 0))
	mk := func(name string, rev int64, ts metav1.Time) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ts}, Revision: rev}
	}
	revs := []*appsv1.ControllerRevision{mk("c", 3, t0), mk("b", 1, t1), mk("a", 1, t1), mk("d", 1, t0)}
	Sort(revs)
	var got []string
	for _, r := range revs {
		got = append(got, r.Name)
	}
	if fmt.Sprint(got) != "[d a b c]" {
		t.Fatalf("sorted %v", got)
	}
	if Next(revs) != 4 || Next(nil) != 1 {
		t.Fatalf("next %d %d", Next(revs), Next(nil))
	}
}

type env struct {
	h      *History
	client *Client
	owner  *appsv1.StatefulSet
}

// newEnv starts a server, a manager whose ControllerRevision informer
// feeds a History, and creates an owner StatefulSet.
func newEnv(t *testing.T) *env {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gvr := appsv1.SchemeGroupVersion.WithResource("controllerrevisions")
	inf := manager.InformerFor[*appsv1.ControllerRevision](mgr, gvr, true)
	client := rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](mgr.Client(), gvr, true)
	h, err := New(inf.Indexer(), client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		mgr.Client().CloseIdleConnections()
	})
	for !inf.HasSynced() {
		time.Sleep(10 * time.Millisecond)
	}
	sets := rest.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](srv.RESTClient(t), appsv1.SchemeGroupVersion.WithResource("statefulsets"), true)
	sel := map[string]string{"app": "foo"}
	owner, err := sets.Namespace("default").Create(context.Background(), &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "test"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: podTemplate(sel)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{h: h, client: client.Namespace("default"), owner: owner}
}

// waitCached waits until List shows n revisions of the owner.
func (e *env) waitCached(t *testing.T, n int) []*appsv1.ControllerRevision {
	t.Helper()
	sel := labels.SelectorFromSet(labels.Set{"app": "foo"})
	var revs []*appsv1.ControllerRevision
	testwait.UntilEvery(t, 10*time.Second, 10*time.Millisecond, fmt.Sprintf("%d revisions cached", n), func() error {
		var err error
		if revs, err = e.h.List(e.owner, sel); err != nil {
			t.Fatal(err)
		}
		if len(revs) != n {
			return fmt.Errorf("%d revisions cached, want %d", len(revs), n)
		}
		return nil
	})
	Sort(revs)
	return revs
}

// TestCreateCollisionSetRevisionTruncate: against a real server, a
// revision is created under its hash name; creating the same data again
// returns it unchanged; a different revision squatting on the next name is
// a collision that bumps the count and renames; SetRevision renumbers;
// List leaves out another owner's revisions; Truncate keeps live ones.
func TestCreateCollisionSetRevisionTruncate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	kind := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	var cc int32
	r1 := NewRevision(e.owner, kind, map[string]string{"app": "foo"}, []byte(`{"v":1}`), 1, &cc)
	c1, err := e.h.Create(ctx, e.owner, r1, &cc)
	if err != nil || c1.Name != r1.Name || cc != 0 {
		t.Fatalf("create: %v, name %s, collisions %d", err, c1.GetName(), cc)
	}
	again, err := e.h.Create(ctx, e.owner, r1, &cc)
	if err != nil || again.UID != c1.UID || cc != 0 {
		t.Fatalf("create again: %v, collisions %d", err, cc)
	}

	// Squat on the name revision 2 will get, with other data.
	r2 := NewRevision(e.owner, kind, map[string]string{"app": "foo"}, []byte(`{"v":2}`), 2, &cc)
	squat := r2.DeepCopy()
	squat.Data.Raw = []byte(`{"v":"squatter"}`)
	squat.OwnerReferences = nil
	if _, err := e.client.Create(ctx, squat, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c2, err := e.h.Create(ctx, e.owner, r2, &cc)
	if err != nil {
		t.Fatal(err)
	}
	if cc != 1 || c2.Name != Name("test", Hash(r2.Data.Raw, &cc)) || c2.Labels[HashLabel] != Hash(r2.Data.Raw, &cc) {
		t.Fatalf("after collision: count %d, name %s, label %s", cc, c2.Name, c2.Labels[HashLabel])
	}

	// Another owner's revision with matching labels is not listed.
	other := NewRevision(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default", UID: types.UID("x")}},
		kind, map[string]string{"app": "foo"}, []byte(`{"v":9}`), 1, &cc)
	if _, err := e.client.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	revs := e.waitCached(t, 3) // c1, c2 and the orphan squatter
	if revs[0].Name == other.Name || revs[1].Name == other.Name || revs[2].Name == other.Name {
		t.Fatal("another owner's revision listed")
	}

	// Adopt the orphan squatter; a controlled one is refused.
	var orphan *appsv1.ControllerRevision
	for _, r := range revs {
		if metav1.GetControllerOf(r) == nil {
			orphan = r
		}
	}
	adopted, err := e.h.Adopt(ctx, e.owner, kind, orphan)
	if err != nil || metav1.GetControllerOf(adopted).UID != e.owner.UID {
		t.Fatalf("adopt: %v", err)
	}
	if _, err := e.h.Adopt(ctx, e.owner, kind, c1); err == nil {
		t.Fatal("adopting a controlled revision succeeded")
	}

	// Roll back to revision 1: it becomes revision 3.
	up, err := e.h.SetRevision(ctx, c1, 3)
	if err != nil || up.Revision != 3 {
		t.Fatalf("set revision: %v", err)
	}
	// A stale copy (old resourceVersion) conflicts and is retried.
	if up2, err := e.h.SetRevision(ctx, c1, 4); err != nil || up2.Revision != 4 {
		t.Fatalf("set revision from a stale copy: %v", err)
	}

	// Truncate to 0 history keeping c1 live: c2 and the squatter go.
	testwait.UntilEvery(t, 10*time.Second, 10*time.Millisecond, "renumbering cached", testwait.Bool(func() bool {
		revs = e.waitCached(t, 3)
		return revs[2].Name == c1.Name && revs[2].Revision == 4
	}))
	if err := e.h.Truncate(ctx, revs, map[string]bool{c1.Name: true}, 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{c2.Name, squat.Name} {
		if _, err := e.client.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: %v, want gone", name, err)
		}
	}
	if _, err := e.client.Get(ctx, c1.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("live revision deleted: %v", err)
	}
	// Deleting what is already gone is not an error.
	if err := e.h.Delete(ctx, c2); err != nil {
		t.Fatal(err)
	}
}

func podTemplate(l map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}
