package namespace_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/garbagecollector"
	"github.com/setpoint-dev/setpoint/internal/controllers/namespace"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

var nsGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// startManager runs a manager with the namespace controller and the
// garbage collector, as the controller manager would, until the test ends.
func startManager(t *testing.T, opts namespace.Options) *rest.Client {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	if err := namespace.Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	if err := garbagecollector.Add(mgr, garbagecollector.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
	return mgr.Client()
}

func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwait.UntilEvery(t, timeout, 20*time.Millisecond, "condition", testwait.Check(cond))
}

func create(t *testing.T, c *rest.Client, gvr schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if _, err := rest.Dynamic(c, gvr, true).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, ns, u.GetName(), err)
	}
}

func meta(name string) map[string]any { return map[string]any{"name": name} }

var podSpec = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}

// content creates one object of each namespaced built-in kind in ns and
// returns their resources.
func content(t *testing.T, c *rest.Client, ns string) []schema.GroupVersionResource {
	t.Helper()
	v1 := corev1.SchemeGroupVersion
	apps := appsv1.SchemeGroupVersion
	sel := map[string]any{"matchLabels": map[string]any{"app": "x"}}
	tmpl := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}, "spec": podSpec}
	objs := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{v1.WithResource("configmaps"), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("cm")}},
		{v1.WithResource("secrets"), map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta("s")}},
		{v1.WithResource("services"), map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta("svc"),
			"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}},
		{v1.WithResource("pods"), map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta("p"), "spec": podSpec}},
		{apps.WithResource("deployments"), map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"),
			"spec": map[string]any{"selector": sel, "template": tmpl}}},
		{apps.WithResource("replicasets"), map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta("rs"),
			"spec": map[string]any{"selector": sel, "template": tmpl}}},
		{coordinationv1.SchemeGroupVersion.WithResource("leases"), map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta("l")}},
		{v1.WithResource("events"), map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": meta("e"),
			"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": ns}, "reason": "Test", "message": "m", "type": "Normal"}},
	}
	var out []schema.GroupVersionResource
	for _, o := range objs {
		create(t, c, o.gvr, ns, o.obj)
		out = append(out, o.gvr)
	}
	return out
}

func deleteNamespace(t *testing.T, c *rest.Client, name string) {
	t.Helper()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	if err := nss.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace %s: %v", name, err)
	}
}

func createNamespace(t *testing.T, c *rest.Client, name string) {
	t.Helper()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	if _, err := nss.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func waitNamespaceGone(t *testing.T, c *rest.Client, name string, timeout time.Duration) {
	t.Helper()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	eventually(t, timeout, func() (bool, string) {
		ns, err := nss.Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("namespace %s: %v, status %+v", name, err, ns.Status)
	})
}

// Deleting a namespace removes every kind of object in it, then the
// namespace; other namespaces are untouched.
func TestNamespaceDeletionRemovesContent(t *testing.T) {
	c := startManager(t, namespace.Options{})
	createNamespace(t, c, "doomed")
	createNamespace(t, c, "bystander")
	gvrs := content(t, c, "doomed")
	content(t, c, "bystander")
	deleteNamespace(t, c, "doomed")
	waitNamespaceGone(t, c, "doomed", 30*time.Second)
	for _, gvr := range gvrs {
		for ns, want := range map[string]int{"doomed": 0, "bystander": 1} {
			l, err := rest.Dynamic(c, gvr, true).Namespace(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list %s in %s: %v", gvr.Resource, ns, err)
			}
			if len(l.Items) != want {
				t.Errorf("%s in %s: %d objects, want %d", gvr.Resource, ns, len(l.Items), want)
			}
		}
	}
}

// A namespace whose content holds a custom finalizer waits, reporting
// NamespaceContentRemaining and NamespaceFinalizersRemaining, until the
// finalizer is removed; then it goes.
func TestNamespaceWaitsForFinalizers(t *testing.T) {
	c := startManager(t, namespace.Options{FinalizerEstimate: time.Second})
	createNamespace(t, c, "held")
	cmGVR := corev1.SchemeGroupVersion.WithResource("configmaps")
	create(t, c, cmGVR, "held", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "keep", "finalizers": []any{"example.com/hold"}}})
	create(t, c, cmGVR, "held", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("free")})
	deleteNamespace(t, c, "held")

	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	eventually(t, 20*time.Second, func() (bool, string) {
		ns, err := nss.Get(context.Background(), "held", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		fin := condition(ns, corev1.NamespaceFinalizersRemaining)
		rem := condition(ns, corev1.NamespaceContentRemaining)
		ok := fin != nil && fin.Status == corev1.ConditionTrue && fin.Reason == "SomeFinalizersRemain" &&
			strings.Contains(fin.Message, "example.com/hold in 1 resource instances") &&
			rem != nil && rem.Status == corev1.ConditionTrue && strings.Contains(rem.Message, "configmaps. has 1 resource instances")
		disc := condition(ns, corev1.NamespaceDeletionDiscoveryFailure)
		ok = ok && disc != nil && disc.Status == corev1.ConditionFalse && ns.Status.Phase == corev1.NamespaceTerminating
		return ok, fmt.Sprintf("status %+v", ns.Status)
	})
	cms := rest.Dynamic(c, cmGVR, true).Namespace("held")
	if _, err := cms.Get(context.Background(), "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("free config map: %v, want it deleted", err)
	}
	if _, err := cms.Patch(context.Background(), "keep", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, c, "held", 20*time.Second)
}

func condition(ns *corev1.Namespace, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == t {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

// A pod bound to a node is deleted gracefully: the namespace waits,
// reporting the pod as remaining, until the node agent (here the test)
// confirms with a zero grace period deletion.
func TestNamespaceWaitsForBoundPods(t *testing.T) {
	c := startManager(t, namespace.Options{})
	createNamespace(t, c, "bound")
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("bound")
	grace := int64(2)
	if _, err := pods.Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{NodeName: "node-1", TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteNamespace(t, c, "bound")
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	eventually(t, 20*time.Second, func() (bool, string) {
		ns, err := nss.Get(context.Background(), "bound", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		rem := condition(ns, corev1.NamespaceContentRemaining)
		return rem != nil && rem.Status == corev1.ConditionTrue && strings.Contains(rem.Message, "pods. has 1 resource instances"),
			fmt.Sprintf("status %+v", ns.Status)
	})
	p, err := pods.Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("pod = %+v, %v; want it terminating", p, err)
	}
	zero := int64(0)
	if err := pods.Delete(context.Background(), "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, c, "bound", 30*time.Second)
}

// Pods are deleted before anything else: while a pod is held by a
// finalizer, the namespace's ConfigMaps stay and the pod is reported as
// remaining; once the pod is gone, the rest goes (as Kubernetes'
// OrderedNamespaceDeletion).
func TestNamespaceDeletesPodsFirst(t *testing.T) {
	c := startManager(t, namespace.Options{FinalizerEstimate: time.Second})
	createNamespace(t, c, "ordered")
	podGVR := corev1.SchemeGroupVersion.WithResource("pods")
	cmGVR := corev1.SchemeGroupVersion.WithResource("configmaps")
	create(t, c, podGVR, "ordered", map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "finalizers": []any{"e2e.example.com/finalizer"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}})
	create(t, c, cmGVR, "ordered", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("cm")})
	deleteNamespace(t, c, "ordered")

	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	pods := rest.Dynamic(c, podGVR, true).Namespace("ordered")
	eventually(t, 20*time.Second, func() (bool, string) {
		ns, err := nss.Get(context.Background(), "ordered", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		rem := condition(ns, corev1.NamespaceContentRemaining)
		p, err := pods.Get(context.Background(), "p", metav1.GetOptions{})
		ok := err == nil && p.GetDeletionTimestamp() != nil && rem != nil && rem.Status == corev1.ConditionTrue &&
			strings.Contains(rem.Message, "pods. has 1 resource instances") && condition(ns, corev1.NamespaceDeletionContentFailure) != nil
		return ok, fmt.Sprintf("status %+v, pod err %v", ns.Status, err)
	})
	time.Sleep(2 * time.Second) // a few more passes of the controller
	cms := rest.Dynamic(c, cmGVR, true).Namespace("ordered")
	if _, err := cms.Get(context.Background(), "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("config map deleted while a pod remained: %v", err)
	}
	if _, err := pods.Patch(context.Background(), "p", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, c, "ordered", 30*time.Second)
}
