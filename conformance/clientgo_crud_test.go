package conformance

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/setpoint-dev/setpoint/testenv"
)

// The CRUD rows: every resource setpoint serves, found through client-go's
// discovery client, goes through create, get, list, update (and a stale
// update: 409), merge / strategic-merge / JSON patches, its status, scale,
// binding and finalize subresources, delete and deletecollection, once with
// the typed clientset and once with the dynamic client.

// crudNamespace holds the namespaced objects of the CRUD rows.
const crudNamespace = "cg-crud"

// kubeVerbs are the verbs kube-apiserver advertises for each resource:
// namespaces have no deletecollection (DELETE /api/v1/namespaces is 405).
var kubeVerbs = map[string][]string{
	"namespaces": {"create", "delete", "get", "list", "patch", "update", "watch"},
}

func allVerbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// crudCase describes one resource for the CRUD rows.
type crudCase struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// newObj is a valid new object of the kind.
	newObj func(name string, labels map[string]string) runtime.Object
	// setStatus changes obj's status; statusSet tells whether a returned
	// object carries that change. Nil for kinds without status.
	setStatus func(obj runtime.Object)
	statusSet func(obj runtime.Object) bool
	// subresources covered by the case besides status.
	subresources []string
	// statusKeepsLabels: the kind's status endpoint writes the labels it
	// is sent, as kube-apiserver's status strategies of workloads,
	// autoscalers and disruption budgets do.
	statusKeepsLabels bool
	// orphansByDefault: a delete naming no propagation policy orphans.
	orphansByDefault bool
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

func crudCases() []crudCase {
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: podSpec}
	}
	om := func(name string, labels map[string]string, namespaced bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Labels: labels}
		if namespaced {
			m.Namespace = crudNamespace
		}
		return m
	}
	one := int32(1)
	return []crudCase{
		{
			gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), kind: "Namespace",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Namespace{ObjectMeta: om(n, l, false)}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.Namespace).Status.Conditions = []corev1.NamespaceCondition{{
					Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse,
					Reason: "ContentDeleted", Message: "set by the test", LastTransitionTime: metav1.Now(),
				}}
			},
			statusSet: func(o runtime.Object) bool {
				c := o.(*corev1.Namespace).Status.Conditions
				return len(c) == 1 && c[0].Reason == "ContentDeleted"
			},
			subresources: []string{"finalize"},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("pods"), kind: "Pod", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Pod{ObjectMeta: om(n, l, true), Spec: podSpec}
			},
			setStatus:    func(o runtime.Object) { o.(*corev1.Pod).Status.Message = "set by the test" },
			statusSet:    func(o runtime.Object) bool { return o.(*corev1.Pod).Status.Message == "set by the test" },
			subresources: []string{"binding"},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("nodes"), kind: "Node",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Node{ObjectMeta: om(n, l, false)}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.Node).Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.8.7"}}
			},
			statusSet: func(o runtime.Object) bool {
				a := o.(*corev1.Node).Status.Addresses
				return len(a) == 1 && a[0].Address == "10.9.8.7"
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("services"), kind: "Service", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Service{ObjectMeta: om(n, l, true), Spec: corev1.ServiceSpec{
					Selector: map[string]string{"app": n}, Ports: []corev1.ServicePort{{Port: 80}},
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.Service).Status.Conditions = []metav1.Condition{{
					Type: "Ready", Status: metav1.ConditionTrue, Reason: "SetByTest", Message: "set by the test",
					LastTransitionTime: metav1.Now(),
				}}
			},
			statusSet: func(o runtime.Object) bool {
				c := o.(*corev1.Service).Status.Conditions
				return len(c) == 1 && c[0].Reason == "SetByTest"
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), kind: "ConfigMap", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.ConfigMap{ObjectMeta: om(n, l, true), Data: map[string]string{"k": "v"}}
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("secrets"), kind: "Secret", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Secret{ObjectMeta: om(n, l, true), Data: map[string][]byte{"k": []byte("v")}}
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Event{
					ObjectMeta:     om(n, l, true),
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: crudNamespace, Name: "p", APIVersion: "v1"},
					Reason:         "Tested", Message: "by client-go", Type: corev1.EventTypeNormal,
					Source: corev1.EventSource{Component: "conformance"}, Count: 1,
					FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
				}
			},
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("deployments"), kind: "Deployment", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.Deployment{ObjectMeta: om(n, l, true), Spec: appsv1.DeploymentSpec{
					Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.Deployment).Status.Replicas, o.(*appsv1.Deployment).Status.UpdatedReplicas = 1, 1
			},
			statusSet:    func(o runtime.Object) bool { return o.(*appsv1.Deployment).Status.UpdatedReplicas == 1 },
			subresources: []string{"scale"},
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("replicasets"), kind: "ReplicaSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.ReplicaSet{ObjectMeta: om(n, l, true), Spec: appsv1.ReplicaSetSpec{
					Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.ReplicaSet).Status.Replicas, o.(*appsv1.ReplicaSet).Status.FullyLabeledReplicas = 1, 1
			},
			statusSet:    func(o runtime.Object) bool { return o.(*appsv1.ReplicaSet).Status.FullyLabeledReplicas == 1 },
			subresources: []string{"scale"},
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("statefulsets"), kind: "StatefulSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.StatefulSet{ObjectMeta: om(n, l, true), Spec: appsv1.StatefulSetSpec{
					Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.StatefulSet).Status.Replicas, o.(*appsv1.StatefulSet).Status.CurrentReplicas = 1, 1
			},
			statusSet:         func(o runtime.Object) bool { return o.(*appsv1.StatefulSet).Status.CurrentReplicas == 1 },
			subresources:      []string{"scale"},
			statusKeepsLabels: true,
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("daemonsets"), kind: "DaemonSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.DaemonSet{ObjectMeta: om(n, l, true), Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n),
				}}
			},
			setStatus:         func(o runtime.Object) { o.(*appsv1.DaemonSet).Status.DesiredNumberScheduled = 2 },
			statusSet:         func(o runtime.Object) bool { return o.(*appsv1.DaemonSet).Status.DesiredNumberScheduled == 2 },
			statusKeepsLabels: true,
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("controllerrevisions"), kind: "ControllerRevision", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.ControllerRevision{ObjectMeta: om(n, l, true), Revision: 1,
					Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)}}
			},
		},
		{
			gvr: batchv1.SchemeGroupVersion.WithResource("jobs"), kind: "Job", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				managedBy := "example.com/nobody"
				return &batchv1.Job{ObjectMeta: om(n, l, true), Spec: batchv1.JobSpec{ManagedBy: &managedBy,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: podSpec.Containers}}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*batchv1.Job).Status.Active = 1
				o.(*batchv1.Job).Status.StartTime = new(metav1.Now())
			},
			statusSet:         func(o runtime.Object) bool { return o.(*batchv1.Job).Status.Active == 1 },
			statusKeepsLabels: true,
			orphansByDefault:  true,
		},
		{
			gvr: batchv1.SchemeGroupVersion.WithResource("cronjobs"), kind: "CronJob", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &batchv1.CronJob{ObjectMeta: om(n, l, true), Spec: batchv1.CronJobSpec{Schedule: "@hourly",
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
						Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: podSpec.Containers}}}}}}
			},
			setStatus:         func(o runtime.Object) { o.(*batchv1.CronJob).Status.LastScheduleTime = new(metav1.Now()) },
			statusSet:         func(o runtime.Object) bool { return o.(*batchv1.CronJob).Status.LastScheduleTime != nil },
			statusKeepsLabels: true,
		},
		{
			gvr: autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om(n, l, true), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: n}, MaxReplicas: 3}}
			},
			setStatus: func(o runtime.Object) { o.(*autoscalingv2.HorizontalPodAutoscaler).Status.DesiredReplicas = 2 },
			statusSet: func(o runtime.Object) bool {
				return o.(*autoscalingv2.HorizontalPodAutoscaler).Status.DesiredReplicas == 2
			},
			statusKeepsLabels: true,
		},
		{
			gvr: autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: om(n, l, true), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: n}, MaxReplicas: 3}}
			},
			setStatus: func(o runtime.Object) { o.(*autoscalingv1.HorizontalPodAutoscaler).Status.DesiredReplicas = 2 },
			statusSet: func(o runtime.Object) bool {
				return o.(*autoscalingv1.HorizontalPodAutoscaler).Status.DesiredReplicas == 2
			},
			statusKeepsLabels: true,
		},
		{
			gvr: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), kind: "PodDisruptionBudget", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				min := intstr.FromInt32(1)
				return &policyv1.PodDisruptionBudget{ObjectMeta: om(n, l, true), Spec: policyv1.PodDisruptionBudgetSpec{
					MinAvailable: &min, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}}}
			},
			setStatus:         func(o runtime.Object) { o.(*policyv1.PodDisruptionBudget).Status.ExpectedPods = 2 },
			statusSet:         func(o runtime.Object) bool { return o.(*policyv1.PodDisruptionBudget).Status.ExpectedPods == 2 },
			statusKeepsLabels: true,
		},
		{
			gvr: coordinationv1.SchemeGroupVersion.WithResource("leases"), kind: "Lease", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				holder := "someone"
				return &coordinationv1.Lease{ObjectMeta: om(n, l, true), Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
			},
		},
	}
}

// crudOps is one client's access to one resource, on typed objects (the
// dynamic client's adapter converts from and to unstructured).
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
	bind        func(ctx context.Context, b *corev1.Binding) error
	finalize    func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error)
}

// servedResources lists, through client-go's discovery client, every
// resource with its verbs and its subresources.
func servedResources(t *testing.T, cs kubernetes.Interface) map[schema.GroupVersionResource]struct {
	verbs []string
	subs  []string
} {
	t.Helper()
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	out := map[schema.GroupVersionResource]struct {
		verbs []string
		subs  []string
	}{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			main, sub, _ := strings.Cut(r.Name, "/")
			e := out[gv.WithResource(main)]
			if sub == "" {
				e.verbs = append([]string(nil), r.Verbs...)
				sort.Strings(e.verbs)
			} else {
				e.subs = append(e.subs, sub)
			}
			out[gv.WithResource(main)] = e
		}
	}
	return out
}

// checkCoverage fails unless the cases cover exactly the served resources
// and their subresources, with kube-apiserver's verbs.
func checkCoverage(t *testing.T, cs kubernetes.Interface, cases []crudCase) {
	t.Helper()
	served := servedResources(t, cs)
	byGVR := map[schema.GroupVersionResource]crudCase{}
	for _, c := range cases {
		byGVR[c.gvr] = c
	}
	for gvr, s := range served {
		if gvr == crdGVR {
			continue // a CRD's name must be <plural>.<group>: its rows are in customresource_test.go
		}
		c, ok := byGVR[gvr]
		if !ok {
			t.Errorf("served resource %v is not covered by the CRUD rows", gvr)
			continue
		}
		want := kubeVerbs[gvr.Resource]
		if want == nil {
			want = allVerbs()
		}
		if !reflect.DeepEqual(s.verbs, want) {
			t.Errorf("%v: discovery verbs %v, kube-apiserver advertises %v", gvr, s.verbs, want)
		}
		for _, sub := range s.subs {
			covered := sub == "status" && c.setStatus != nil
			for _, x := range c.subresources {
				covered = covered || x == sub
			}
			if !covered {
				t.Errorf("served subresource %s/%s is not covered", gvr.Resource, sub)
			}
		}
	}
	if len(served) != len(cases)+1 { // + customresourcedefinitions
		t.Errorf("discovery serves %d resources, the cases cover %d", len(served), len(cases))
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

// exerciseCRUD runs every verb of one resource through ops.
func exerciseCRUD(t *testing.T, c crudCase, ops crudOps) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	suite := map[string]string{"suite": "crud"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{"suite": "crud"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	// create
	created, err := ops.create(ctx, c.newObj("obj-a", with(nil)))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm, _ := meta.Accessor(created)
	if cm.GetName() != "obj-a" || cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("create returned name=%q uid=%q rv=%q created=%v", cm.GetName(), cm.GetUID(), cm.GetResourceVersion(), cm.GetCreationTimestamp())
	}
	if _, err := ops.create(ctx, c.newObj("obj-a", with(nil))); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}

	// get
	got, err := ops.get(ctx, "obj-a")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if gm, _ := meta.Accessor(got); gm.GetUID() != cm.GetUID() || gm.GetResourceVersion() != cm.GetResourceVersion() {
		t.Fatalf("get: uid %q rv %q, created uid %q rv %q", gm.GetUID(), gm.GetResourceVersion(), cm.GetUID(), cm.GetResourceVersion())
	}
	if _, err := ops.get(ctx, "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: want NotFound, got %v", err)
	}

	// list
	items, err := ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if n := namesOf(items); !reflect.DeepEqual(n, []string{"obj-a"}) {
		t.Fatalf("list suite=crud: %v", n)
	}

	// update, then a stale update
	gm, _ := meta.Accessor(got)
	l := gm.GetLabels()
	l["updated"] = "yes"
	gm.SetLabels(l)
	updated, err := ops.update(ctx, got)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	um, _ := meta.Accessor(updated)
	if um.GetLabels()["updated"] != "yes" || um.GetResourceVersion() == cm.GetResourceVersion() {
		t.Fatalf("update returned labels %v rv %q (was %q)", um.GetLabels(), um.GetResourceVersion(), cm.GetResourceVersion())
	}
	cm.SetLabels(map[string]string{"suite": "crud", "stale": "yes"})
	if _, err := ops.update(ctx, created); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: want Conflict, got %v", err)
	}

	// patches
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
		out, err := ops.patch(ctx, "obj-a", p.pt, []byte(p.body))
		if err != nil {
			t.Fatalf("%s patch: %v", p.pt, err)
		}
		if labelsOf(out)[p.key] != "yes" {
			t.Fatalf("%s patch: labels %v", p.pt, labelsOf(out))
		}
	}
	if _, err := ops.patch(ctx, "obj-a", types.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/labels/merge","value":"no"}]`)); err == nil {
		t.Fatal("a failing JSON patch test op was accepted")
	}
	got, err = ops.get(ctx, "obj-a")
	if err != nil {
		t.Fatal(err)
	}
	want := with(map[string]string{"updated": "yes", "merge": "yes", "strategic": "yes", "json": "yes"})
	if c.gvr.Resource == "namespaces" {
		want["kubernetes.io/metadata.name"] = "obj-a" // set by the server, as kube-apiserver does
	}
	if !reflect.DeepEqual(labelsOf(got), want) {
		t.Fatalf("labels after update and patches: %v, want %v", labelsOf(got), want)
	}

	// status: changes status only (labels sent along are ignored)
	if c.setStatus != nil {
		if ops.updateStatus == nil {
			t.Fatal("the client has no UpdateStatus for a resource with a status subresource")
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
		if _, ok := labelsOf(out)["via-status"]; ok != c.statusKeepsLabels {
			t.Fatalf("update status: labels %v (the kind keeps those sent: %v)", labelsOf(out), c.statusKeepsLabels)
		}
		again, err := ops.get(ctx, "obj-a")
		if err != nil || !c.statusSet(again) {
			t.Fatalf("status not persisted: %v", err)
		}
	}

	// scale subresource
	if contains(c.subresources, "scale") {
		s, err := ops.getScale(ctx, "obj-a")
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		if s.Spec.Replicas != 1 || s.Name != "obj-a" || s.Status.Selector != "app=obj-a" {
			t.Fatalf("scale: %+v", s)
		}
		s.Spec.Replicas = 3
		s2, err := ops.updateScale(ctx, "obj-a", s)
		if err != nil {
			t.Fatalf("update scale: %v", err)
		}
		if s2.Spec.Replicas != 3 {
			t.Fatalf("update scale returned %+v", s2)
		}
		o, err := ops.get(ctx, "obj-a")
		if err != nil {
			t.Fatal(err)
		}
		var replicas int32
		switch o := o.(type) {
		case *appsv1.Deployment:
			replicas = *o.Spec.Replicas
		case *appsv1.ReplicaSet:
			replicas = *o.Spec.Replicas
		case *appsv1.StatefulSet:
			replicas = *o.Spec.Replicas
		}
		if replicas != 3 {
			t.Fatalf("spec.replicas after scale: %d", replicas)
		}
		s.ResourceVersion = "1"
		if _, err := ops.updateScale(ctx, "obj-a", s); !apierrors.IsConflict(err) {
			t.Fatalf("stale scale update: want Conflict, got %v", err)
		}
	}

	// binding subresource: a pod gets its node
	if contains(c.subresources, "binding") {
		if _, err := ops.create(ctx, c.newObj("obj-bound", with(nil))); err != nil {
			t.Fatal(err)
		}
		err := ops.bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: "obj-bound", Namespace: crudNamespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-x"},
		})
		if err != nil {
			t.Fatalf("bind: %v", err)
		}
		o, err := ops.get(ctx, "obj-bound")
		if err != nil || o.(*corev1.Pod).Spec.NodeName != "node-x" {
			t.Fatalf("after binding: %v %v", o, err)
		}
		err = ops.bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: "obj-bound", Namespace: crudNamespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-y"},
		})
		if !apierrors.IsConflict(err) {
			t.Fatalf("binding a bound pod: want Conflict, got %v", err)
		}
		// a bound pod is deleted gracefully: it stays with a deletionTimestamp
		if err := ops.delete(ctx, "obj-bound", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		o, err = ops.get(ctx, "obj-bound")
		if err != nil {
			t.Fatalf("a bound pod vanished at once on a graceful delete: %v", err)
		}
		if p := o.(*corev1.Pod); p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
			t.Fatalf("graceful delete: deletionTimestamp %v grace %v", p.DeletionTimestamp, p.DeletionGracePeriodSeconds)
		}
		zero := int64(0)
		if err := ops.delete(ctx, "obj-bound", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		if _, err := ops.get(ctx, "obj-bound"); !apierrors.IsNotFound(err) {
			t.Fatalf("after delete with grace 0: %v", err)
		}
	}

	// delete
	uid := cm.GetUID()
	wrongUID := types.UID("not-" + string(uid))
	if err := ops.delete(ctx, "obj-a", c.deleteOptions(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a wrong uid precondition: want Conflict, got %v", err)
	}
	if err := ops.delete(ctx, "obj-a", c.deleteOptions(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if c.gvr.Resource == "namespaces" {
		// the namespace turns Terminating; finalize (no controllers run) removes it
		o, err := ops.get(ctx, "obj-a")
		if err != nil {
			t.Fatalf("get terminating namespace: %v", err)
		}
		ns := o.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating || !reflect.DeepEqual(ns.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) {
			t.Fatalf("deleted namespace: deletionTimestamp %v phase %q finalizers %v", ns.DeletionTimestamp, ns.Status.Phase, ns.Spec.Finalizers)
		}
		ns.Spec.Finalizers = nil
		if _, err := ops.finalize(ctx, ns); err != nil {
			t.Fatalf("finalize: %v", err)
		}
	}
	if _, err := ops.get(ctx, "obj-a"); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want NotFound, got %v", err)
	}
	if err := ops.delete(ctx, "obj-a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: want NotFound, got %v", err)
	}

	// deletecollection
	if ops.deleteCollection == nil {
		return
	}
	for _, n := range []string{"obj-b", "obj-c", "obj-d"} {
		l := with(map[string]string{"batch": "yes"})
		if n == "obj-d" {
			l = with(nil)
		}
		if _, err := ops.create(ctx, c.newObj(n, l)); err != nil {
			t.Fatal(err)
		}
	}
	err = ops.deleteCollection(ctx, c.deleteOptions(metav1.DeleteOptions{}), metav1.ListOptions{LabelSelector: "batch=yes"})
	if c.gvr.Resource == "namespaces" {
		if !apierrors.IsMethodNotSupported(err) {
			t.Fatalf("deletecollection of namespaces: want 405 MethodNotAllowed as kube-apiserver, got %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	items, err = ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"})
	if err != nil {
		t.Fatal(err)
	}
	if n := namesOf(items); !reflect.DeepEqual(n, []string{"obj-d"}) {
		t.Fatalf("after deletecollection batch=yes: %v", n)
	}
	if err := ops.deleteCollection(ctx, c.deleteOptions(metav1.DeleteOptions{}), metav1.ListOptions{LabelSelector: labelsString(suite)}); err != nil {
		t.Fatal(err)
	}
	if items, err := ops.list(ctx, metav1.ListOptions{LabelSelector: "suite=crud"}); err != nil || len(items) != 0 {
		t.Fatalf("after deleting all: %v %v", namesOf(items), err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func labelsString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// typedClient is what every client-go typed resource client has.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// typedOps adapts a typed client; UpdateStatus and DeleteCollection are
// used when the client has them.
func typedOps[T runtime.Object, L runtime.Object](c typedClient[T, L]) crudOps {
	ops := crudOps{
		create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return c.Create(ctx, o.(T), metav1.CreateOptions{})
		},
		get: func(ctx context.Context, name string) (runtime.Object, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			l, err := c.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return meta.ExtractList(l)
		},
		update: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return c.Update(ctx, o.(T), metav1.UpdateOptions{})
		},
		patch: func(ctx context.Context, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
			return c.Patch(ctx, name, pt, data, metav1.PatchOptions{})
		},
		delete: c.Delete,
	}
	if s, ok := any(c).(interface {
		UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
	}); ok {
		ops.updateStatus = func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return s.UpdateStatus(ctx, o.(T), metav1.UpdateOptions{})
		}
	}
	if d, ok := any(c).(interface {
		DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
	}); ok {
		ops.deleteCollection = func(ctx context.Context, opts metav1.DeleteOptions, sel metav1.ListOptions) error {
			return d.DeleteCollection(ctx, opts, sel)
		}
	}
	if s, ok := any(c).(interface {
		GetScale(context.Context, string, metav1.GetOptions) (*autoscalingv1.Scale, error)
		UpdateScale(context.Context, string, *autoscalingv1.Scale, metav1.UpdateOptions) (*autoscalingv1.Scale, error)
	}); ok {
		ops.getScale = func(ctx context.Context, name string) (*autoscalingv1.Scale, error) {
			return s.GetScale(ctx, name, metav1.GetOptions{})
		}
		ops.updateScale = func(ctx context.Context, name string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return s.UpdateScale(ctx, name, sc, metav1.UpdateOptions{})
		}
	}
	return ops
}

// TestClientGoTypedCRUD: the typed clientset does every verb on every
// served resource (row 1).
func TestClientGoTypedCRUD(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	cases := crudCases()
	checkCoverage(t, cs, cases)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crudNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	core, apps := cs.CoreV1(), cs.AppsV1()
	for _, c := range cases {
		var ops crudOps
		switch c.gvr.Resource {
		case "namespaces":
			ops = typedOps(core.Namespaces())
			ops.finalize = func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
				return core.Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
			}
			// the typed client has no DeleteCollection for namespaces, as
			// kube-apiserver serves none: ask through its REST client.
			ops.deleteCollection = func(ctx context.Context, _ metav1.DeleteOptions, sel metav1.ListOptions) error {
				return core.RESTClient().Delete().Resource("namespaces").
					VersionedParams(&sel, scheme.ParameterCodec).Do(ctx).Error()
			}
		case "pods":
			ops = typedOps(core.Pods(crudNamespace))
			ops.bind = func(ctx context.Context, b *corev1.Binding) error {
				return core.Pods(crudNamespace).Bind(ctx, b, metav1.CreateOptions{})
			}
		case "nodes":
			ops = typedOps(core.Nodes())
		case "services":
			ops = typedOps(core.Services(crudNamespace))
			// client-go's typed Services client has no DeleteCollection
			// (kube-apiserver serves it): use its REST client.
			ops.deleteCollection = func(ctx context.Context, _ metav1.DeleteOptions, sel metav1.ListOptions) error {
				return core.RESTClient().Delete().Namespace(crudNamespace).Resource("services").
					VersionedParams(&sel, scheme.ParameterCodec).Do(ctx).Error()
			}
		case "configmaps":
			ops = typedOps(core.ConfigMaps(crudNamespace))
		case "secrets":
			ops = typedOps(core.Secrets(crudNamespace))
		case "events":
			ops = typedOps(core.Events(crudNamespace))
		case "deployments":
			ops = typedOps(apps.Deployments(crudNamespace))
		case "replicasets":
			ops = typedOps(apps.ReplicaSets(crudNamespace))
		case "statefulsets":
			ops = typedOps(apps.StatefulSets(crudNamespace))
		case "daemonsets":
			ops = typedOps(apps.DaemonSets(crudNamespace))
		case "controllerrevisions":
			ops = typedOps(apps.ControllerRevisions(crudNamespace))
		case "jobs":
			ops = typedOps(cs.BatchV1().Jobs(crudNamespace))
		case "cronjobs":
			ops = typedOps(cs.BatchV1().CronJobs(crudNamespace))
		case "horizontalpodautoscalers":
			if c.gvr.Version == "v1" {
				ops = typedOps(cs.AutoscalingV1().HorizontalPodAutoscalers(crudNamespace))
			} else {
				ops = typedOps(cs.AutoscalingV2().HorizontalPodAutoscalers(crudNamespace))
			}
		case "poddisruptionbudgets":
			ops = typedOps(cs.PolicyV1().PodDisruptionBudgets(crudNamespace))
		case "leases":
			ops = typedOps(cs.CoordinationV1().Leases(crudNamespace))
		default:
			t.Fatalf("no typed client for %v", c.gvr)
		}
		t.Run(c.gvr.Version+"/"+c.gvr.Resource, func(t *testing.T) { exerciseCRUD(t, c, ops) })
	}
}

// toUnstructured converts a typed object for the dynamic client.
func toUnstructured(t *testing.T, o runtime.Object) *unstructured.Unstructured {
	gvks, _, err := scheme.Scheme.ObjectKinds(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u
}

// fromUnstructured checks that the dynamic client returned an unstructured
// object of the kind and converts it back.
func fromUnstructured(t *testing.T, u *unstructured.Unstructured, kind string, into runtime.Object) error {
	if u.GetKind() != kind {
		return fmt.Errorf("dynamic client returned kind %q, want %q", u.GetKind(), kind)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

func dynamicOps(t *testing.T, dc dynamic.Interface, c crudCase) crudOps {
	var ri dynamic.ResourceInterface = dc.Resource(c.gvr)
	if c.namespaced {
		ri = dc.Resource(c.gvr).Namespace(crudNamespace)
	}
	back := func(u *unstructured.Unstructured, err error) (runtime.Object, error) {
		if err != nil {
			return nil, err
		}
		o := c.newObj("", nil)
		if err := fromUnstructured(t, u, c.kind, o); err != nil {
			return nil, err
		}
		return o, nil
	}
	ops := crudOps{
		create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.Create(ctx, toUnstructured(t, o), metav1.CreateOptions{}))
		},
		get: func(ctx context.Context, name string) (runtime.Object, error) {
			return back(ri.Get(ctx, name, metav1.GetOptions{}))
		},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			l, err := ri.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			if l.GetKind() != c.kind+"List" || l.GetResourceVersion() == "" {
				return nil, fmt.Errorf("dynamic list: kind %q resourceVersion %q", l.GetKind(), l.GetResourceVersion())
			}
			var out []runtime.Object
			for i := range l.Items {
				o, err := back(&l.Items[i], nil)
				if err != nil {
					return nil, err
				}
				out = append(out, o)
			}
			return out, nil
		},
		update: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.Update(ctx, toUnstructured(t, o), metav1.UpdateOptions{}))
		},
		updateStatus: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.UpdateStatus(ctx, toUnstructured(t, o), metav1.UpdateOptions{}))
		},
		patch: func(ctx context.Context, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
			return back(ri.Patch(ctx, name, pt, data, metav1.PatchOptions{}))
		},
		delete: func(ctx context.Context, name string, opts metav1.DeleteOptions) error {
			return ri.Delete(ctx, name, opts)
		},
		deleteCollection: func(ctx context.Context, opts metav1.DeleteOptions, sel metav1.ListOptions) error {
			return ri.DeleteCollection(ctx, opts, sel)
		},
		getScale: func(ctx context.Context, name string) (*autoscalingv1.Scale, error) {
			u, err := ri.Get(ctx, name, metav1.GetOptions{}, "scale")
			if err != nil {
				return nil, err
			}
			s := &autoscalingv1.Scale{}
			return s, fromUnstructured(t, u, "Scale", s)
		},
		updateScale: func(ctx context.Context, name string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			u, err := ri.Update(ctx, toUnstructured(t, s), metav1.UpdateOptions{}, "scale")
			if err != nil {
				return nil, err
			}
			out := &autoscalingv1.Scale{}
			return out, fromUnstructured(t, u, "Scale", out)
		},
		bind: func(ctx context.Context, b *corev1.Binding) error {
			u, err := ri.Create(ctx, toUnstructured(t, b), metav1.CreateOptions{}, "binding")
			if err == nil && u.GetKind() != "Status" && u.GetKind() != "Binding" {
				return fmt.Errorf("binding returned kind %q", u.GetKind())
			}
			return err
		},
		finalize: func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
			u, err := ri.Update(ctx, toUnstructured(t, ns), metav1.UpdateOptions{}, "finalize")
			if err != nil {
				return nil, err
			}
			out := &corev1.Namespace{}
			return out, fromUnstructured(t, u, "Namespace", out)
		},
	}
	if c.setStatus == nil {
		ops.updateStatus = nil
	}
	return ops
}

// TestClientGoDynamicCRUD: the dynamic client does every verb on every
// served resource with unstructured objects (row 2).
func TestClientGoDynamicCRUD(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cfg := clientConfig(t, env)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs := clientset(t, env)
	cases := crudCases()
	checkCoverage(t, cs, cases)
	nsObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": crudNamespace},
	}}
	if _, err := dc.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ops := dynamicOps(t, dc, c)
		t.Run(c.gvr.Version+"/"+c.gvr.Resource, func(t *testing.T) { exerciseCRUD(t, c, ops) })
	}
	// a status subresource on a kind without one is a 404
	_, err = dc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(crudNamespace).
		Get(context.Background(), "x", metav1.GetOptions{}, "status")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("configmaps/status: want NotFound, got %v", err)
	}
}
