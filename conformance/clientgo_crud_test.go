package conformance

import (
	"bufio"
	"context"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/setpoint-dev/setpoint/testenv"
)

// The CRUD rows: every resource setpoint serves, found through client-go's
// discovery client, goes through the verbs kube-apiserver v1.37.2 serves for
// it (testdata/kube-apiserver-v1.37-discovery.txt, its discovery documents):
// create, get, list, update (and a stale update: 409), merge /
// strategic-merge / JSON patches, its status and scale subresources, delete
// and deletecollection; create-only resources (the reviews, bindings) answer
// a create; componentstatuses are read; the action subresources (binding,
// serviceaccounts/token, CSR approval, eviction, ephemeral containers,
// resize, namespace finalize) do what they do in Kubernetes. Once with the typed
// clientset and once with the dynamic client.
//
// With CONFORMANCE_REFERENCE_KUBECONFIG naming a kubeconfig, the rows run
// against that cluster instead (kube-apiserver v1.37.2, to check the rows
// themselves); they need the namespace cg-crud and the cluster-scoped
// names they use to be free there, and remove what they create. A whole
// cluster's controllers race some rows there (status writes of the
// replication controller, daemon set and disruption controllers, the
// Endpoints and EndpointSlices of the Service row, the ServiceCIDR
// finalizer). The connect subresources (log, exec, attach, portforward,
// proxy) are checked on objects no node serves (clientgo_crud_connect_test.go).

// crudNamespace holds the namespaced objects of the CRUD rows.
const crudNamespace = "cg-crud"

// crudCase describes one resource for the CRUD rows.
type crudCase struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// newObj is a valid new object of the kind, named name.
	newObj func(name string, labels map[string]string) runtime.Object
	// name maps the rows' names (obj-a, obj-b, …) to names the kind
	// accepts (an IPAddress is named by its address); nil keeps them.
	name func(string) string
	// setStatus changes obj's status; statusSet tells whether a returned
	// object carries that change. Nil for kinds without status.
	setStatus func(obj runtime.Object)
	statusSet func(obj runtime.Object) bool
	// subresources covered by the case besides status (see subresourceFlows).
	subresources []string
	// statusKeepsLabels: the kind's status endpoint writes the labels it
	// is sent, as kube-apiserver's status strategies of most kinds do
	// (those of pods, nodes, services, namespaces, deployments, replica
	// sets and a few more keep the stored metadata).
	statusKeepsLabels bool
	// orphansByDefault: a delete naming no propagation policy orphans.
	orphansByDefault bool
	// protectionFinalizer is the finalizer kube-apiserver puts on every
	// new object of the kind (its StorageObjectInUseProtection admission):
	// a deleted object stays until the finalizer is removed.
	protectionFinalizer string
	// special replaces the generic verbs for resources that serve only
	// some of them (create-only reviews and bindings, read-only
	// componentstatuses).
	special func(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps)
}

// objName is the name of the case's object for one of the rows' names.
func (c crudCase) objName(n string) string {
	if c.name == nil {
		return n
	}
	return c.name(n)
}

// deleteOptions asks for background deletion for kinds that orphan their
// dependents by default (batch/v1 jobs, as kube-apiserver: without a
// garbage collector the object would stay with the "orphan" finalizer).
func (c crudCase) deleteOptions(o metav1.DeleteOptions) metav1.DeleteOptions {
	if c.orphansByDefault {
		bg := metav1.DeletePropagationBackground
		o.PropagationPolicy = &bg
	}
	return o
}

func (c crudCase) testName() string {
	if c.gvr.Group == "" {
		return c.gvr.Version + "/" + c.gvr.Resource
	}
	return c.gvr.Group + "/" + c.gvr.Version + "/" + c.gvr.Resource
}

// crudCases are all the rows' resources.
func crudCases() []crudCase {
	var all []crudCase
	for _, cases := range [][]crudCase{coreCases(), workloadCases(), accessCases(), networkCases(), storageCases(), extensionCases(), specialCases()} {
		all = append(all, cases...)
	}
	return all
}

// crudOps is one client's access to one resource, on typed objects (the
// dynamic client's adapter converts from and to unstructured). A nil
// function is a verb the client does not offer for the resource.
type crudOps struct {
	create           func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
	get              func(ctx context.Context, name string) (runtime.Object, error)
	list             func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error)
	update           func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
	updateStatus     func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
	patch            func(ctx context.Context, name string, pt types.PatchType, data []byte) (runtime.Object, error)
	delete           func(ctx context.Context, name string, opts metav1.DeleteOptions) error
	deleteCollection func(ctx context.Context, opts metav1.DeleteOptions, sel metav1.ListOptions) error

	// subresources
	getScale    func(ctx context.Context, name string) (*autoscalingv1.Scale, error)
	updateScale func(ctx context.Context, name string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error)
	finalize    func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error)
	actions     subresourceActions
}

// crudEnv is what every row may use besides the client under test: a
// typed clientset for setting up other objects, and what discovery serves.
type crudEnv struct {
	cfg    *rest.Config
	cs     kubernetes.Interface
	served map[schema.GroupVersionResource]servedResource
}

// crudTarget is the cluster the rows run against: a fresh setpoint, or
// the cluster of CONFORMANCE_REFERENCE_KUBECONFIG.
func crudTarget(t *testing.T) *rest.Config {
	t.Helper()
	if kc := os.Getenv("CONFORMANCE_REFERENCE_KUBECONFIG"); kc != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			t.Fatal(err)
		}
		cfg.QPS, cfg.Burst = -1, 0
		t.Logf("running the rows against the cluster of %s", kc)
		return cfg
	}
	return clientConfig(t, startSetpoint(t, testenv.Options{}))
}

// startCRUD prepares a run of the rows: the coverage check and the
// namespace; it removes the namespace at the end.
func startCRUD(t *testing.T, cfg *rest.Config) (crudEnv, []crudCase) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := crudCases()
	env := crudEnv{cfg: cfg, cs: cs, served: servedResources(t, cs)}
	checkCoverage(t, env.served, cases)
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crudNamespace}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		// a reference cluster may still be removing an earlier run's
		if !apierrors.IsAlreadyExists(err) || !referenceMode() || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().Namespaces().Delete(ctx, crudNamespace, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", crudNamespace, err)
		}
	})
	return env, cases
}

// servedResource is a resource's verbs and its subresources' verbs.
type servedResource struct {
	verbs string
	subs  map[string]string
}

// servedResources lists, through client-go's discovery client, every
// resource with its verbs and its subresources.
func servedResources(t *testing.T, cs kubernetes.Interface) map[schema.GroupVersionResource]servedResource {
	t.Helper()
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	out := map[schema.GroupVersionResource]servedResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			addServed(out, gv, r.Name, r.Verbs)
		}
	}
	return out
}

func addServed(m map[schema.GroupVersionResource]servedResource, gv schema.GroupVersion, name string, verbs []string) {
	main, sub, _ := strings.Cut(name, "/")
	e := m[gv.WithResource(main)]
	v := slices.Sorted(slices.Values(verbs))
	if sub == "" {
		e.verbs = strings.Join(v, ",")
	} else {
		if e.subs == nil {
			e.subs = map[string]string{}
		}
		e.subs[sub] = strings.Join(v, ",")
	}
	m[gv.WithResource(main)] = e
}

// kubeResources is what kube-apiserver v1.37.2 serves, from
// testdata/kube-apiserver-v1.37-discovery.txt.
func kubeResources(t *testing.T) map[schema.GroupVersionResource]servedResource {
	t.Helper()
	f, err := os.Open("testdata/kube-apiserver-v1.37-discovery.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[schema.GroupVersionResource]servedResource{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		gv, err := schema.ParseGroupVersion(fs[0])
		if err != nil {
			t.Fatal(err)
		}
		addServed(out, gv, fs[1], strings.Split(fs[2], ","))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCoverage fails unless the cases cover exactly the served resources
// and their subresources, and the served resources, subresources and
// verbs are kube-apiserver's.
func checkCoverage(t *testing.T, served map[schema.GroupVersionResource]servedResource, cases []crudCase) {
	t.Helper()
	kube := kubeResources(t)
	byGVR := map[schema.GroupVersionResource]crudCase{}
	for _, c := range cases {
		if _, dup := byGVR[c.gvr]; dup {
			t.Errorf("two CRUD rows for %v", c.gvr)
		}
		byGVR[c.gvr] = c
	}
	for gvr, k := range kube {
		s, ok := served[gvr]
		if !ok {
			t.Errorf("kube-apiserver serves %v, setpoint does not", gvr)
			continue
		}
		if s.verbs != k.verbs {
			t.Errorf("%v: discovery verbs %s, kube-apiserver serves %s", gvr, s.verbs, k.verbs)
		}
		for sub, verbs := range k.subs {
			got, ok := s.subs[sub]
			switch {
			case !ok:
				t.Errorf("kube-apiserver serves %s/%s (%s), setpoint does not", gvr.Resource, sub, verbs)
			case ok && got != verbs:
				t.Errorf("%s/%s: discovery verbs %s, kube-apiserver serves %s", gvr.Resource, sub, got, verbs)
			}
		}
	}
	for gvr, s := range served {
		k, ok := kube[gvr]
		if !ok {
			t.Errorf("setpoint serves %v, kube-apiserver does not", gvr)
		}
		if gvr == crdGVR {
			continue // a CRD's name must be <plural>.<group>: its rows are in customresource_test.go
		}
		c, ok := byGVR[gvr]
		if !ok {
			t.Errorf("served resource %v is not covered by the CRUD rows", gvr)
			continue
		}
		for sub := range s.subs {
			if _, ok := k.subs[sub]; !ok {
				t.Errorf("setpoint serves %s/%s, kube-apiserver does not", gvr.Resource, sub)
			}
			if !(sub == "status" && c.setStatus != nil) && !slices.Contains(c.subresources, sub) {
				t.Errorf("served subresource %s/%s is not covered", gvr.Resource, sub)
			}
		}
	}
	for _, c := range cases {
		if _, ok := served[c.gvr]; !ok {
			t.Errorf("a CRUD row covers %v, which is not served", c.gvr)
		}
	}
}

func labelsOf(o runtime.Object) map[string]string {
	m, err := meta.Accessor(o)
	if err != nil {
		panic(err)
	}
	return m.GetLabels()
}

func namesOf(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		m, _ := meta.Accessor(o)
		out = append(out, m.GetName())
	}
	sort.Strings(out)
	return out
}

func labelsString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// crudLabels is the rows' label suite=crud plus extra.
func crudLabels(extra map[string]string) map[string]string {
	m := map[string]string{"suite": "crud"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// exerciseCase runs one row: the generic verbs, or the resource's own.
func exerciseCase(t *testing.T, env crudEnv, c crudCase, ops crudOps) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.special != nil {
		c.special(t, ctx, env, c, ops)
		return
	}
	created := exerciseCreateGetList(t, ctx, c, ops)
	exerciseUpdatePatch(t, ctx, c, ops, created)
	exerciseStatus(t, ctx, c, ops)
	for _, sub := range c.subresources {
		if sub == "finalize" {
			continue // part of the namespace's delete
		}
		flow, ok := subresourceFlows[sub]
		if !ok {
			t.Fatalf("no flow for subresource %s", sub)
		}
		t.Run(sub, func(t *testing.T) {
			if !env.serves(c.gvr, sub) {
				t.Skipf("%s/%s is not served by this build", c.gvr.Resource, sub)
			}
			flow(t, ctx, env, c, ops)
		})
	}
	exerciseDelete(t, ctx, c, ops, created)
	exerciseDeleteCollection(t, ctx, c, ops)
}

func (e crudEnv) serves(gvr schema.GroupVersionResource, sub string) bool {
	_, ok := e.served[gvr].subs[sub]
	return ok
}

// exerciseCreateGetList creates obj-a (and fails a second create), gets
// and lists it; it returns what create answered.
func exerciseCreateGetList(t *testing.T, ctx context.Context, c crudCase, ops crudOps) runtime.Object {
	t.Helper()
	a := c.objName("obj-a")
	created, err := ops.create(ctx, c.newObj(a, crudLabels(nil)))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm, _ := meta.Accessor(created)
	if cm.GetName() != a || cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("create returned name=%q uid=%q rv=%q created=%v", cm.GetName(), cm.GetUID(), cm.GetResourceVersion(), cm.GetCreationTimestamp())
	}
	want, why := c.finalizers()
	if why != "" {
		t.Logf("known difference: %s", why)
	}
	if f := cm.GetFinalizers(); !slices.Equal(f, want) {
		t.Fatalf("create returned finalizers %q, want %q", f, want)
	}
	if _, err := ops.create(ctx, c.newObj(a, crudLabels(nil))); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}
	got, err := ops.get(ctx, a)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if gm, _ := meta.Accessor(got); gm.GetUID() != cm.GetUID() {
		t.Fatalf("get: uid %q, created uid %q", gm.GetUID(), cm.GetUID())
	}
	if _, err := ops.get(ctx, c.objName("missing")); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: want NotFound, got %v", err)
	}
	items, err := ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if n := namesOf(items); !reflect.DeepEqual(n, []string{a}) {
		t.Fatalf("list suite=crud: %v", n)
	}
	return created
}

// exerciseUpdatePatch updates obj-a's labels (and fails a stale update),
// then patches them with each patch type.
func exerciseUpdatePatch(t *testing.T, ctx context.Context, c crudCase, ops crudOps, created runtime.Object) {
	t.Helper()
	a := c.objName("obj-a")
	// A get and an update, again on a conflict as clients do: a
	// controller may write the object meanwhile (the APF configuration
	// controller writes a new FlowSchema's status).
	var gm metav1.Object
	var updated runtime.Object
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := ops.get(ctx, a)
		if err != nil {
			return err
		}
		gm, _ = meta.Accessor(got)
		l := gm.GetLabels()
		l["updated"] = "yes"
		gm.SetLabels(l)
		updated, err = ops.update(ctx, got)
		return err
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	um, _ := meta.Accessor(updated)
	if um.GetLabels()["updated"] != "yes" || um.GetResourceVersion() == gm.GetResourceVersion() {
		t.Fatalf("update returned labels %v rv %q (was %q)", um.GetLabels(), um.GetResourceVersion(), gm.GetResourceVersion())
	}
	stale := created.DeepCopyObject()
	sm, _ := meta.Accessor(stale)
	sm.SetLabels(crudLabels(map[string]string{"stale": "yes"}))
	if _, err := ops.update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: want Conflict, got %v", err)
	}

	patches := []struct {
		pt   types.PatchType
		body string
		key  string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"yes"}}}`, "merge"},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"strategic":"yes"}}}`, "strategic"},
		{types.JSONPatchType, `[{"op":"test","path":"/metadata/labels/merge","value":"yes"},{"op":"add","path":"/metadata/labels/json","value":"yes"}]`, "json"},
	}
	for _, p := range patches {
		out, err := ops.patch(ctx, a, p.pt, []byte(p.body))
		if err != nil {
			t.Fatalf("%s patch: %v", p.pt, err)
		}
		if labelsOf(out)[p.key] != "yes" {
			t.Fatalf("%s patch: labels %v", p.pt, labelsOf(out))
		}
	}
	if _, err := ops.patch(ctx, a, types.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/labels/merge","value":"no"}]`)); err == nil {
		t.Fatal("a failing JSON patch test op was accepted")
	}
	got, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	want := crudLabels(map[string]string{"updated": "yes", "merge": "yes", "strategic": "yes", "json": "yes"})
	if c.gvr.Resource == "namespaces" {
		want["kubernetes.io/metadata.name"] = a // set by the server, as kube-apiserver does
	}
	if !reflect.DeepEqual(labelsOf(got), want) {
		t.Fatalf("labels after update and patches: %v, want %v", labelsOf(got), want)
	}
}

// exerciseStatus changes obj-a's status through the status subresource:
// status only (labels sent along are written only by kinds whose status
// strategy keeps them).
func exerciseStatus(t *testing.T, ctx context.Context, c crudCase, ops crudOps) {
	t.Helper()
	if c.setStatus == nil {
		return
	}
	if ops.updateStatus == nil {
		t.Fatal("the client has no UpdateStatus for a resource with a status subresource")
	}
	a := c.objName("obj-a")
	got, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	c.setStatus(got)
	gm, _ := meta.Accessor(got)
	l := gm.GetLabels()
	l["via-status"] = "yes"
	gm.SetLabels(l)
	out, err := ops.updateStatus(ctx, got)
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if !c.statusSet(out) {
		t.Fatalf("update status: status not changed: %+v", out)
	}
	keeps := c.statusKeepsLabels
	if why, ok := statusLabelsDiffer[c.testName()]; ok && !referenceMode() {
		t.Logf("known difference: %s", why)
		keeps = !keeps
	}
	if _, ok := labelsOf(out)["via-status"]; ok != keeps {
		t.Fatalf("update status: labels %v (the kind keeps those sent: %v)", labelsOf(out), keeps)
	}
	again, err := ops.get(ctx, a)
	if err != nil || !c.statusSet(again) {
		t.Fatalf("status not persisted: %v", err)
	}
}

// referenceMode: the rows run against CONFORMANCE_REFERENCE_KUBECONFIG's
// cluster.
func referenceMode() bool { return os.Getenv("CONFORMANCE_REFERENCE_KUBECONFIG") != "" }

// exerciseDelete deletes obj-a, first with a wrong uid precondition.
func exerciseDelete(t *testing.T, ctx context.Context, c crudCase, ops crudOps, created runtime.Object) {
	t.Helper()
	a := c.objName("obj-a")
	cm, _ := meta.Accessor(created)
	uid := cm.GetUID()
	wrongUID := types.UID("not-" + string(uid))
	if err := ops.delete(ctx, a, c.deleteOptions(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a wrong uid precondition: want Conflict, got %v", err)
	}
	if err := ops.delete(ctx, a, c.deleteOptions(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if c.gvr.Resource == "namespaces" {
		finalizeNamespace(t, ctx, ops, a)
	}
	releaseProtection(t, ctx, c, ops, a)
	if _, err := ops.get(ctx, a); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want NotFound, got %v", err)
	}
	if err := ops.delete(ctx, a, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: want NotFound, got %v", err)
	}
}

// finalizeNamespace: a deleted namespace turns Terminating; finalize (no
// controllers run) removes it.
func finalizeNamespace(t *testing.T, ctx context.Context, ops crudOps, name string) {
	t.Helper()
	o, err := ops.get(ctx, name)
	if apierrors.IsNotFound(err) && referenceMode() {
		return // the reference's namespace controller was faster
	}
	if err != nil {
		t.Fatalf("get terminating namespace: %v", err)
	}
	ns := o.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating || !reflect.DeepEqual(ns.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) {
		t.Fatalf("deleted namespace: deletionTimestamp %v phase %q finalizers %v", ns.DeletionTimestamp, ns.Status.Phase, ns.Spec.Finalizers)
	}
	ns.Spec.Finalizers = nil
	if _, err := ops.finalize(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("finalize: %v", err)
	}
}

// exerciseDeleteCollection deletes by label selector, then all the rows'
// objects.
func exerciseDeleteCollection(t *testing.T, ctx context.Context, c crudCase, ops crudOps) {
	t.Helper()
	if ops.deleteCollection == nil {
		t.Fatal("the client has no deletecollection for the resource")
	}
	for _, n := range []string{"obj-b", "obj-c", "obj-d"} {
		l := crudLabels(map[string]string{"batch": "yes"})
		if n == "obj-d" {
			l = crudLabels(nil)
		}
		if _, err := ops.create(ctx, c.newObj(c.objName(n), l)); err != nil {
			t.Fatal(err)
		}
	}
	err := ops.deleteCollection(ctx, c.deleteOptions(metav1.DeleteOptions{}), metav1.ListOptions{LabelSelector: "batch=yes"})
	if c.gvr.Resource == "namespaces" {
		if !apierrors.IsMethodNotSupported(err) {
			t.Fatalf("deletecollection of namespaces: want 405 MethodNotAllowed as kube-apiserver, got %v", err)
		}
		for _, n := range []string{"obj-b", "obj-c", "obj-d"} {
			if err := ops.delete(ctx, n, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			finalizeNamespace(t, ctx, ops, n)
		}
		return
	}
	if err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	releaseProtection(t, ctx, c, ops, c.objName("obj-b"), c.objName("obj-c"))
	items, err := ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"})
	if err != nil {
		t.Fatal(err)
	}
	if n := namesOf(items); !reflect.DeepEqual(n, []string{c.objName("obj-d")}) {
		t.Fatalf("after deletecollection batch=yes: %v", n)
	}
	if err := ops.deleteCollection(ctx, c.deleteOptions(metav1.DeleteOptions{}), metav1.ListOptions{LabelSelector: labelsString(crudLabels(nil))}); err != nil {
		t.Fatal(err)
	}
	releaseProtection(t, ctx, c, ops, c.objName("obj-d"))
	if items, err := ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"}); err != nil || len(items) != 0 {
		t.Fatalf("after deleting all: %v %v", namesOf(items), err)
	}
}

// replicasOf is spec.replicas of a kind with a scale subresource.
func replicasOf(o runtime.Object) int32 {
	switch o := o.(type) {
	case *appsv1.Deployment:
		return *o.Spec.Replicas
	case *appsv1.ReplicaSet:
		return *o.Spec.Replicas
	case *appsv1.StatefulSet:
		return *o.Spec.Replicas
	case *corev1.ReplicationController:
		return *o.Spec.Replicas
	}
	panic("no replicas")
}
