package conformance

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/setpoint-dev/setpoint/testenv"
)

// secretMirror is the reconciler under test: every ConfigMap labelled
// role=source gets a Secret of the same name and data, which it controls.
type secretMirror struct{ client.Client }

func (r *secretMirror) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, sec, func() error {
		sec.StringData = nil
		sec.Data = map[string][]byte{}
		for k, v := range cm.Data {
			sec.Data[k] = []byte(v)
		}
		return controllerutil.SetControllerReference(&cm, sec, r.Scheme())
	})
	return ctrl.Result{}, err
}

func crNames(objs []client.Object) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func cmNames(l *corev1.ConfigMapList) string {
	var objs []client.Object
	for i := range l.Items {
		objs = append(objs, &l.Items[i])
	}
	return crNames(objs)
}

func podNames(l *corev1.PodList) string {
	var objs []client.Object
	for i := range l.Items {
		objs = append(objs, &l.Items[i])
	}
	return crNames(objs)
}

// TestControllerRuntimeEnvtestStyle is a controller-runtime test suite
// written as envtest suites are, with setpoint's testenv in envtest's
// place: start the environment, build a *rest.Config from its kubeconfig,
// client.New, create objects, run a reconciler through a manager, assert,
// stop. The subtests cover the client.Client surface such suites use.
func TestControllerRuntimeEnvtestStyle(t *testing.T) {
	// BeforeSuite: testEnv.Start() — here the API server alone, as envtest.
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // what envtest's Start sets on its rest.Config
	k8sClient, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ns = "suite"
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	// The manager under test: a cache field index and the reconciler.
	mgr, err := ctrl.NewManager(cfg, crManagerOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "data.color", func(o client.Object) []string {
		if c, ok := o.(*corev1.ConfigMap).Data["color"]; ok {
			return []string{c}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	isSource := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["role"] == "source" })
	if err := ctrl.NewControllerManagedBy(mgr).Named("secretmirror").
		For(&corev1.ConfigMap{}, builder.WithPredicates(isSource)).Owns(&corev1.Secret{}).
		Complete(&secretMirror{mgr.GetClient()}); err != nil {
		t.Fatal(err)
	}
	run := crStart(t, mgr)

	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	newCM := func(name string, lbl map[string]string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbl}, Data: data}
	}
	newDeployment := func(name string) *appsv1.Deployment {
		lbl := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: lbl},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: lbl},
					Spec: corev1.PodSpec{Containers: []corev1.Container{
						{Name: "a", Image: "a:1"}, {Name: "b", Image: "b:1"},
					}},
				},
			},
		}
	}
	images := func(d *appsv1.Deployment) string {
		var out []string
		for _, c := range d.Spec.Template.Spec.Containers {
			out = append(out, c.Name+"="+c.Image)
		}
		return strings.Join(out, ",")
	}

	t.Run("CreateGet", func(t *testing.T) {
		cm := newCM("created", map[string]string{"k": "v"}, map[string]string{"a": "1"})
		if err := k8sClient.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if cm.UID == "" || cm.ResourceVersion == "" || cm.CreationTimestamp.IsZero() {
			t.Fatalf("Create did not fill the object from the response: %+v", cm.ObjectMeta)
		}
		var got corev1.ConfigMap
		if err := k8sClient.Get(ctx, key("created"), &got); err != nil {
			t.Fatal(err)
		}
		if got.UID != cm.UID || got.ResourceVersion != cm.ResourceVersion || got.Data["a"] != "1" || got.Labels["k"] != "v" {
			t.Fatalf("Get: %+v", got)
		}
		if err := k8sClient.Create(ctx, newCM("created", nil, nil)); !apierrors.IsAlreadyExists(err) {
			t.Fatalf("second Create: %v, want AlreadyExists", err)
		}
		if err := k8sClient.Get(ctx, key("absent"), &got); !apierrors.IsNotFound(err) {
			t.Fatalf("Get absent: %v, want NotFound", err)
		}
	})

	t.Run("UpdateConflict", func(t *testing.T) {
		cm := newCM("updated", nil, map[string]string{"a": "1"})
		if err := k8sClient.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		stale := cm.DeepCopy()
		cm.Data["a"] = "2"
		if err := k8sClient.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if cm.ResourceVersion == stale.ResourceVersion {
			t.Fatal("Update did not return the new resourceVersion")
		}
		stale.Data["a"] = "3"
		if err := k8sClient.Update(ctx, stale); !apierrors.IsConflict(err) {
			t.Fatalf("stale Update: %v, want Conflict", err)
		}
		var got corev1.ConfigMap
		if err := k8sClient.Get(ctx, key("updated"), &got); err != nil || got.Data["a"] != "2" {
			t.Fatalf("after updates: %v %v", got.Data, err)
		}
	})

	t.Run("PatchMerge", func(t *testing.T) {
		cm := newCM("merged", map[string]string{"keep": "yes"}, map[string]string{"a": "1", "b": "2"})
		if err := k8sClient.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		stale := cm.DeepCopy()
		base := cm.DeepCopy()
		cm.Labels["added"] = "yes"
		delete(cm.Data, "b")
		cm.Data["c"] = "3"
		if err := k8sClient.Patch(ctx, cm, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		var got corev1.ConfigMap
		if err := k8sClient.Get(ctx, key("merged"), &got); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Labels) != "map[added:yes keep:yes]" || fmt.Sprint(got.Data) != "map[a:1 c:3]" {
			t.Fatalf("after merge patch: labels %v data %v", got.Labels, got.Data)
		}
		// With the optimistic lock the patch carries the resourceVersion.
		lockedBase := stale.DeepCopy()
		stale.Data["a"] = "stale"
		if err := k8sClient.Patch(ctx, stale, client.MergeFromWithOptions(lockedBase, client.MergeFromWithOptimisticLock{})); !apierrors.IsConflict(err) {
			t.Fatalf("stale optimistic-lock merge patch: %v, want Conflict", err)
		}
		// A JSON patch too.
		if err := k8sClient.Patch(ctx, &got, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/a","value":"json"}]`))); err != nil {
			t.Fatal(err)
		}
		if got.Data["a"] != "json" || got.Data["c"] != "3" {
			t.Fatalf("after JSON patch: %v", got.Data)
		}
	})

	t.Run("PatchStrategic", func(t *testing.T) {
		d := newDeployment("strategic")
		if err := k8sClient.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		base := d.DeepCopy()
		d.Spec.Template.Spec.Containers[0].Image = "a:2"
		if err := k8sClient.Patch(ctx, d, client.StrategicMergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		if images(d) != "a=a:2,b=b:1" {
			t.Fatalf("after StrategicMergeFrom: %s", images(d))
		}
		// Containers merge by name: a strategic patch naming only c adds it.
		add := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"c:1"}]}}}}`)
		if err := k8sClient.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, add)); err != nil {
			t.Fatal(err)
		}
		if images(d) != "c=c:1,a=a:2,b=b:1" && images(d) != "a=a:2,b=b:1,c=c:1" {
			t.Fatalf("after strategic patch adding c: %s", images(d))
		}
		// $patch: delete removes one by name.
		del := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`)
		if err := k8sClient.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, del)); err != nil {
			t.Fatal(err)
		}
		if got := images(d); got != "c=c:1,b=b:1" && got != "b=b:1,c=c:1" {
			t.Fatalf("after $patch delete of a: %s", got)
		}
		// The same body as a JSON merge patch replaces the whole list.
		if err := k8sClient.Patch(ctx, d, client.RawPatch(types.MergePatchType, add)); err != nil {
			t.Fatal(err)
		}
		if images(d) != "c=c:1" {
			t.Fatalf("after merge patch: %s", images(d))
		}
	})

	t.Run("StatusUpdate", func(t *testing.T) {
		d := newDeployment("status")
		if err := k8sClient.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		gen := d.Generation
		d.Status.Replicas, d.Status.ReadyReplicas, d.Status.ObservedGeneration = 1, 1, gen
		d.Spec.Replicas = ptr.To[int32](5) // ignored by the status subresource
		if err := k8sClient.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		var got appsv1.Deployment
		if err := k8sClient.Get(ctx, key("status"), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.ReadyReplicas != 1 || got.Status.ObservedGeneration != gen || *got.Spec.Replicas != 1 || got.Generation != gen {
			t.Fatalf("after Status().Update: status %+v, spec.replicas %d, generation %d (was %d)", got.Status, *got.Spec.Replicas, got.Generation, gen)
		}
		// The main resource ignores status.
		got.Status.ReadyReplicas = 9
		got.Spec.Replicas = ptr.To[int32](2)
		if err := k8sClient.Update(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.ReadyReplicas != 1 || *got.Spec.Replicas != 2 || got.Generation != gen+1 {
			t.Fatalf("after Update: status %+v, spec.replicas %d, generation %d", got.Status, *got.Spec.Replicas, got.Generation)
		}
		// Status().Patch as well.
		base := got.DeepCopy()
		got.Status.AvailableReplicas = 1
		if err := k8sClient.Status().Patch(ctx, &got, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		if got.Status.AvailableReplicas != 1 || got.Status.ReadyReplicas != 1 {
			t.Fatalf("after Status().Patch: %+v", got.Status)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		cm := newCM("deleted", nil, nil)
		if err := k8sClient.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Delete(ctx, cm, client.Preconditions{UID: ptr.To(types.UID("not-the-uid"))}); !apierrors.IsConflict(err) {
			t.Fatalf("Delete with a wrong UID precondition: %v, want Conflict", err)
		}
		if err := k8sClient.Delete(ctx, cm, client.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Get(ctx, key("deleted"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Get after Delete: %v", err)
		}
		if err := k8sClient.Delete(ctx, cm); !apierrors.IsNotFound(err) {
			t.Fatalf("second Delete: %v, want NotFound", err)
		}
	})

	t.Run("DeleteAllOf", func(t *testing.T) {
		for _, n := range []string{"x1", "x2", "x3"} {
			if err := k8sClient.Create(ctx, newCM(n, map[string]string{"batch": "x"}, nil)); err != nil {
				t.Fatal(err)
			}
		}
		if err := k8sClient.Create(ctx, newCM("y1", map[string]string{"batch": "y"}, nil)); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"batch": "x"}); err != nil {
			t.Fatal(err)
		}
		var l corev1.ConfigMapList
		if err := k8sClient.List(ctx, &l, client.InNamespace(ns), client.HasLabels{"batch"}); err != nil {
			t.Fatal(err)
		}
		if cmNames(&l) != "y1" {
			t.Fatalf("after DeleteAllOf batch=x: %s", cmNames(&l))
		}
	})

	t.Run("ListLabelSelectors", func(t *testing.T) {
		for name, lbl := range map[string]map[string]string{
			"web":        {"tier": "web"},
			"web-canary": {"tier": "web", "canary": "true"},
			"api":        {"tier": "api"},
			"db":         {"tier": "db"},
		} {
			if err := k8sClient.Create(ctx, newCM("sel-"+name, lbl, nil)); err != nil {
				t.Fatal(err)
			}
		}
		sel, err := labels.Parse("tier in (web,api),!canary")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			opts []client.ListOption
			want string
		}{
			{[]client.ListOption{client.MatchingLabels{"tier": "web"}}, "sel-web,sel-web-canary"},
			{[]client.ListOption{client.MatchingLabelsSelector{Selector: sel}}, "sel-api,sel-web"},
			{[]client.ListOption{client.HasLabels{"canary"}}, "sel-web-canary"},
			{[]client.ListOption{client.HasLabels{"tier"}, client.Limit(2)}, "sel-api,sel-db"},
			{[]client.ListOption{client.MatchingFields{"metadata.name": "sel-db"}}, "sel-db"},
		} {
			var l corev1.ConfigMapList
			if err := k8sClient.List(ctx, &l, append(tc.opts, client.InNamespace(ns))...); err != nil {
				t.Fatal(err)
			}
			if cmNames(&l) != tc.want {
				t.Errorf("List %v: %s, want %s", tc.opts, cmNames(&l), tc.want)
			}
		}
		// Limit pages with a continue token; the next page has the rest.
		var page corev1.ConfigMapList
		if err := k8sClient.List(ctx, &page, client.InNamespace(ns), client.HasLabels{"tier"}, client.Limit(3)); err != nil {
			t.Fatal(err)
		}
		var rest corev1.ConfigMapList
		if err := k8sClient.List(ctx, &rest, client.InNamespace(ns), client.HasLabels{"tier"}, client.Limit(3), client.Continue(page.Continue)); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 3 || page.Continue == "" || len(rest.Items) != 1 || rest.Continue != "" {
			t.Fatalf("pages: %s (continue %q), %s (continue %q)", cmNames(&page), page.Continue, cmNames(&rest), rest.Continue)
		}
	})

	t.Run("FieldIndexThroughCache", func(t *testing.T) {
		for name, node := range map[string]string{"p1": "node-a", "p2": "node-a", "p3": "node-b"} {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "c:1"}}},
			}
			if err := k8sClient.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		for name, color := range map[string]string{"red1": "red", "red2": "red", "blue1": "blue"} {
			if err := k8sClient.Create(ctx, newCM(name, nil, map[string]string{"color": color})); err != nil {
				t.Fatal(err)
			}
		}
		cached := mgr.GetClient()
		crEventually(t, 10*time.Second, "pods by spec.nodeName from the cache index", func() (bool, string) {
			var l corev1.PodList
			if err := cached.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": "node-a"}); err != nil {
				return false, err.Error()
			}
			return podNames(&l) == "p1,p2", podNames(&l)
		})
		// data.color is no server field: only the cache's index answers it.
		crEventually(t, 10*time.Second, "ConfigMaps by data.color from the cache index", func() (bool, string) {
			var l corev1.ConfigMapList
			if err := cached.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"data.color": "red"}); err != nil {
				return false, err.Error()
			}
			return cmNames(&l) == "red1,red2", cmNames(&l)
		})
		// The server answers the same pod field selector itself.
		var l corev1.PodList
		if err := k8sClient.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": "node-b"}); err != nil || podNames(&l) != "p3" {
			t.Fatalf("server field selector spec.nodeName=node-b: %s %v", podNames(&l), err)
		}
		var cl corev1.ConfigMapList
		if err := k8sClient.List(ctx, &cl, client.InNamespace(ns), client.MatchingFields{"data.color": "red"}); !apierrors.IsBadRequest(err) {
			t.Fatalf("server field selector data.color: %v, want BadRequest", err)
		}
	})

	t.Run("Reconciler", func(t *testing.T) {
		src := newCM("source", map[string]string{"role": "source"}, map[string]string{"user": "alice"})
		if err := k8sClient.Create(ctx, src); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Create(ctx, newCM("ignored", map[string]string{"role": "other"}, map[string]string{"user": "bob"})); err != nil {
			t.Fatal(err)
		}
		mirrored := func(user string, notUID types.UID) func() (bool, string) {
			return func() (bool, string) {
				var s corev1.Secret
				if err := k8sClient.Get(ctx, key("source"), &s); err != nil {
					return false, err.Error()
				}
				return string(s.Data["user"]) == user && metav1.IsControlledBy(&s, src) && s.UID != notUID,
					fmt.Sprintf("data %q owners %v uid %s", s.Data, s.OwnerReferences, s.UID)
			}
		}
		crEventually(t, 10*time.Second, "Secret mirrors the source", mirrored("alice", ""))
		var first corev1.Secret
		if err := k8sClient.Get(ctx, key("source"), &first); err != nil {
			t.Fatal(err)
		}
		base := src.DeepCopy()
		src.Data["user"] = "carol"
		if err := k8sClient.Patch(ctx, src, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		crEventually(t, 10*time.Second, "Secret follows the source", mirrored("carol", ""))
		if err := k8sClient.Delete(ctx, &first); err != nil {
			t.Fatal(err)
		}
		crEventually(t, 10*time.Second, "deleted Secret recreated (Owns)", mirrored("carol", first.UID))
		if err := k8sClient.Get(ctx, key("ignored"), &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Secret for a ConfigMap the predicate filters out: %v", err)
		}
	})

	// AfterSuite: stop the manager, then the environment.
	if err := run.stop(); err != nil {
		t.Fatalf("manager: %v", err)
	}
	if err := env.Stop(); err != nil {
		t.Fatalf("testEnv.Stop: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := k8sClient.Get(short, key("created"), &corev1.ConfigMap{}); err == nil {
		t.Fatal("the API still answers after Stop")
	}
}
