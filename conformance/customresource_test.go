package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/testenv"
)

const gizmoCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.conformance.setpoint.dev}
spec:
  group: conformance.setpoint.dev
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
          status:
            type: object
            properties:
              phase: {type: string}
              observedGeneration: {type: integer, format: int64}
`

var (
	gizmoGV  = schema.GroupVersion{Group: "conformance.setpoint.dev", Version: "v1"}
	gizmoGVR = gizmoGV.WithResource("gizmos")
	crdGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// Gizmo is a custom kind as an operator author writes it.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GizmoSpec   `json:"spec"`
	Status            GizmoStatus `json:"status,omitempty"`
}

type GizmoSpec struct {
	Size int64 `json:"size"`
}

type GizmoStatus struct {
	Phase              string `json:"phase,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

type GizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gizmo `json:"items"`
}

func (g *Gizmo) DeepCopyObject() runtime.Object {
	c := *g
	g.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (l *GizmoList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]Gizmo, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Gizmo)
	}
	return &c
}

// installGizmoCRD creates the CRD through client-go's dynamic client and
// waits until it is Established.
func installGizmoCRD(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(gizmoCRD), &obj.Object); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := dyn.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn.Resource(crdGVR).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD not established: %v", err)
	}
}

// client-go's dynamic client and dynamic informers work on a custom
// resource: CRUD, schema validation as a 422, and an informer that sees
// creates, updates and deletes.
func TestClientGoDynamicCustomResource(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	dyn := dynamic.NewForConfigOrDie(clientConfig(t, env))
	installGizmoCRD(t, dyn)
	ctx := context.Background()
	gizmos := dyn.Resource(gizmoGVR).Namespace("default")

	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	inf := factory.ForResource(gizmoGVR).Informer()
	events := make(chan string, 16)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { events <- "add " + o.(*unstructured.Unstructured).GetName() },
		UpdateFunc: func(_, o any) { events <- "update " + o.(*unstructured.Unstructured).GetName() },
		DeleteFunc: func(o any) { events <- "delete" },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gizmoGV.String(), "kind": "Gizmo", "metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"size": int64(2)}}}
	if _, err := gizmos.Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	bad := g.DeepCopy()
	bad.SetName("bad")
	_ = unstructured.SetNestedField(bad.Object, int64(0), "spec", "size")
	if _, err := gizmos.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create with size 0: %v, want 422 Invalid", err)
	}
	cur, err := gizmos.Get(ctx, "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(cur.Object, int64(3), "spec", "size")
	if _, err := gizmos.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := gizmos.Delete(ctx, "g1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, want := range []string{"add g1", "update g1", "delete"} {
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("event %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q event", want)
		}
	}
}

// A controller-runtime operator with a typed custom kind: For(Gizmo),
// Owns(ConfigMap), status through the status subresource, and the garbage
// collector removing the ConfigMap when the Gizmo goes.
func TestControllerRuntimeCustomResourceOperator(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true})
	cfg := clientConfig(t, env)
	installGizmoCRD(t, dynamic.NewForConfigOrDie(cfg))

	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	sch.AddKnownTypes(gizmoGV, &Gizmo{}, &GizmoList{})
	metav1.AddToGroupVersion(sch, gizmoGV)
	opts := crManagerOptions(t)
	opts.Scheme = sch
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).For(&Gizmo{}).Owns(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			g := &Gizmo{}
			if err := c.Get(ctx, req.NamespacedName, g); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-config", Namespace: g.Namespace}}
			if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
				cm.Data = map[string]string{"size": fmt.Sprint(g.Spec.Size)}
				return controllerutil.SetControllerReference(g, cm, mgr.GetScheme())
			}); err != nil {
				return reconcile.Result{}, err
			}
			g.Status = GizmoStatus{Phase: "Ready", ObservedGeneration: g.Generation}
			return reconcile.Result{}, c.Status().Update(ctx, g)
		}))
	if err != nil {
		t.Fatal(err)
	}
	crStart(t, mgr)

	ctx := context.Background()
	g := &Gizmo{ObjectMeta: metav1.ObjectMeta{Name: "g1", Namespace: "default"}, Spec: GizmoSpec{Size: 4}}
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("create: %v", err)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	poll("status Ready and the ConfigMap", func() bool {
		cur := &Gizmo{}
		cm := &corev1.ConfigMap{}
		return c.Get(ctx, client.ObjectKeyFromObject(g), cur) == nil && cur.Status.Phase == "Ready" &&
			cur.Status.ObservedGeneration == cur.Generation &&
			c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "g1-config"}, cm) == nil && cm.Data["size"] == "4" &&
			len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].Kind == "Gizmo"
	})
	cur := &Gizmo{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(g), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Size = 7
	if err := c.Update(ctx, cur); err != nil {
		t.Fatalf("update: %v", err)
	}
	poll("the ConfigMap follows the spec", func() bool {
		cm := &corev1.ConfigMap{}
		return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "g1-config"}, cm) == nil && cm.Data["size"] == "7"
	})
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatalf("delete: %v", err)
	}
	poll("the garbage collector removes the ConfigMap", func() bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "g1-config"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err)
	})
}

// The apiextensions clientset does every verb on CustomResourceDefinitions
// (the generic CRUD rows cannot: a CRD's name must be <plural>.<group>):
// create (and a second create: 409), get, list by label, update, merge
// patch, status update, stale update (409), a schema that is not
// structural (422), delete and deletecollection.
func TestClientGoCustomResourceDefinitions(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := apiextclient.NewForConfigOrDie(clientConfig(t, env)).ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	newCRD := func(plural string, labels map[string]string) *apiextv1.CustomResourceDefinition {
		return &apiextv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".crud.setpoint.dev", Labels: labels},
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: "crud.setpoint.dev", Scope: apiextv1.ClusterScoped,
				Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Kind: "K" + plural},
				Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
			},
		}
	}
	created, err := cs.Create(ctx, newCRD("alphas", map[string]string{"batch": "yes"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Spec.Names.Singular != "kalphas" || created.Spec.Names.ListKind != "KalphasList" || created.Spec.Conversion == nil {
		t.Errorf("defaults not applied: %+v", created.Spec)
	}
	if _, err := cs.Create(ctx, newCRD("alphas", nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v", err)
	}
	bad := newCRD("betas", nil)
	bad.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextv1.JSONSchemaProps{"spec": {Description: "no type"}}}
	if _, err := cs.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("non-structural schema: %v, want 422", err)
	}
	if _, err := cs.Create(ctx, newCRD("gammas", map[string]string{"batch": "yes"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := cs.List(ctx, metav1.ListOptions{LabelSelector: "batch=yes"})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("list: %v %d", err, len(l.Items))
	}
	// Once the server has established it, nothing else writes the CRD.
	var got *apiextv1.CustomResourceDefinition
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cs.Get(ctx, "alphas.crud.setpoint.dev", metav1.GetOptions{})
		return err == nil && len(got.Status.StoredVersions) == 1 && got.Status.AcceptedNames.Plural == "alphas", err
	}); err != nil {
		t.Fatalf("not established: %v", err)
	}
	stale := got.DeepCopy()
	got.Labels["touched"] = "yes"
	if got, err = cs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	stale.Labels["stale"] = "yes"
	if _, err := cs.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want 409", err)
	}
	if _, err := cs.Patch(ctx, got.Name, types.MergePatchType, []byte(`{"spec":{"names":{"shortNames":["al"]}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cs.Get(ctx, "alphas.crud.setpoint.dev", metav1.GetOptions{})
		return err == nil && len(got.Status.AcceptedNames.ShortNames) == 1, err
	}); err != nil {
		t.Fatalf("accepted names do not follow the patch: %v %+v", err, got.Status)
	}
	got.Status.StoredVersions = nil // a stored version cannot be dropped
	if _, err := cs.UpdateStatus(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("status update dropping a stored version: %v, want 422", err)
	}
	if err := cs.Delete(ctx, "gammas.crud.setpoint.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := cs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=yes"}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	}); err != nil {
		t.Errorf("CRDs not gone: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
