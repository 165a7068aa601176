package rest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/rest"
)

var (
	cmGVR     = corev1.SchemeGroupVersion.WithResource("configmaps")
	deployGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

func configMaps(c *rest.Client) *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true).Namespace("default")
}

func newCM(name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
}

func TestConfigMapCRUDAndErrors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	cms := configMaps(c)

	created, err := cms.Create(ctx, newCM("a", nil, map[string]string{"k": "v1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Data["k"] != "v1" {
		t.Fatalf("created = %+v", created)
	}
	if _, err := cms.Create(ctx, newCM("a", nil, nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v1" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "v2" {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	// The copy read before the update now holds a stale resourceVersion.
	got.Data["k"] = "v3"
	_, err = cms.Update(ctx, got, metav1.UpdateOptions{})
	var se *apierrors.StatusError
	if !apierrors.IsConflict(err) || !errors.As(err, &se) {
		t.Errorf("stale update: %v, want a Conflict StatusError", err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want NotFound", err)
	}

	// Delete with a stale resourceVersion precondition fails, a current one succeeds.
	stale := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &created.ResourceVersion}}
	if err := cms.Delete(ctx, "a", stale); !apierrors.IsConflict(err) {
		t.Errorf("delete with stale precondition: %v, want Conflict", err)
	}
	fresh := metav1.DeleteOptions{
		Preconditions:      &metav1.Preconditions{UID: &updated.UID, ResourceVersion: &updated.ResourceVersion},
		GracePeriodSeconds: ptr.To[int64](0),
		PropagationPolicy:  ptr.To(metav1.DeletePropagationBackground),
	}
	if err := cms.Delete(ctx, "a", fresh); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: %v, want NotFound", err)
	}
}

func TestPatchTypes(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	cms := configMaps(c)
	if _, err := cms.Create(ctx, newCM("p", map[string]string{"a": "1"}, map[string]string{"x": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	cases := []struct {
		pt   types.PatchType
		body string
		key  string
		want string
	}{
		{types.JSONPatchType, `[{"op":"add","path":"/data/y","value":"json"}]`, "y", "json"},
		{types.MergePatchType, `{"data":{"z":"merge"}}`, "z", "merge"},
		{types.StrategicMergePatchType, `{"data":{"w":"strategic"}}`, "w", "strategic"},
	}
	for _, tc := range cases {
		out, err := cms.Patch(ctx, "p", tc.pt, []byte(tc.body), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s patch: %v", tc.pt, err)
		}
		if out.Data[tc.key] != tc.want || out.Data["x"] != "1" {
			t.Errorf("%s patch: data = %v", tc.pt, out.Data)
		}
	}
	_, err := cms.Patch(ctx, "p", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/x","value":"no"}]`), metav1.PatchOptions{})
	if err == nil || !errors.As(err, new(*apierrors.StatusError)) {
		t.Errorf("failing JSON patch test op: %v, want a StatusError", err)
	}
}

func TestDeploymentStatusUpdate(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	deps := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, deployGVR, true).Namespace("default")
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	d, err := deps.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	d.Status.Replicas, d.Status.ReadyReplicas = 2, 1
	d.Spec.Replicas = ptr.To[int32](5) // ignored by the status subresource
	st, err := deps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if st.Status.ReadyReplicas != 1 || *st.Spec.Replicas != 2 {
		t.Errorf("after status update: status %+v, spec replicas %d", st.Status, *st.Spec.Replicas)
	}
	p, err := deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"readyReplicas":2}}`), metav1.PatchOptions{}, "status")
	if err != nil || p.Status.ReadyReplicas != 2 {
		t.Fatalf("status patch = %+v, %v", p.Status, err)
	}
	if err := deps.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestListPagingSelectorsAndDeleteCollection(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	cms := configMaps(c)
	for i := range 7 {
		tier := "back"
		if i%2 == 0 {
			tier = "front"
		}
		if _, err := cms.Create(ctx, newCM(fmt.Sprintf("cm-%d", i), map[string]string{"tier": tier}, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	var names []string
	opts := metav1.ListOptions{Limit: 3}
	pages := 0
	for {
		l, err := cms.List(ctx, opts)
		if err != nil {
			t.Fatalf("list page: %v", err)
		}
		pages++
		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if pages != 3 || len(names) != 7 {
		t.Errorf("paging: %d pages, names %v; want 3 pages of 7 objects", pages, names)
	}
	front, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "tier=front"})
	if err != nil || len(front.Items) != 4 {
		t.Fatalf("label selector: %d items, %v", len(front.Items), err)
	}
	one, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cm-3"})
	if err != nil || len(one.Items) != 1 || one.Items[0].Name != "cm-3" {
		t.Fatalf("field selector: %+v, %v", one, err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=front"}); err != nil {
		t.Fatalf("delete collection: %v", err)
	}
	left, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, cm := range left.Items {
		if cm.Labels["tier"] == "front" {
			t.Errorf("%s survived deletecollection", cm.Name)
		}
	}
	if len(left.Items) != 3 {
		t.Errorf("after deletecollection: %d items, want 3", len(left.Items))
	}
	// All namespaces: an unbound accessor spans them.
	all, err := allNamespaces(c).List(ctx, metav1.ListOptions{LabelSelector: "tier=back"})
	if err != nil || len(all.Items) != 3 {
		t.Errorf("all-namespace list: %d items, %v", len(all.Items), err)
	}
}

func allNamespaces(c *rest.Client) *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true)
}

func TestUpdateSubresourceFinalize(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fin"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := nss.Delete(ctx, "fin", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if ns, err = nss.Get(ctx, "fin", metav1.GetOptions{}); err != nil || ns.DeletionTimestamp == nil {
		t.Fatalf("after delete: %v, %v (want a terminating namespace)", ns, err)
	}
	ns.Spec.Finalizers = nil
	if _, err := nss.UpdateSubresource(ctx, ns, "finalize", metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := nss.Get(ctx, "fin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after finalize: get = %v, want NotFound", err)
	}
}
