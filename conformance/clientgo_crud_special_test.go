package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The rows of resources that serve only some verbs: the reviews and
// bindings (create), componentstatuses (get, list). Every verb they do not
// serve is a 405, as in kube-apiserver.

func specialCases() []crudCase {
	review := func(gvr schemaGVR, kind string, namespaced bool, req func() runtime.Object, check func(t *testing.T, answer runtime.Object)) crudCase {
		return crudCase{gvr: gvr.gvr(), kind: kind, namespaced: namespaced,
			newObj:  func(string, map[string]string) runtime.Object { return req() },
			special: createOnly(check)}
	}
	masters := []string{"system:masters"}
	podsInNS := &authorizationv1.ResourceAttributes{Namespace: crudNamespace, Verb: "get", Resource: "pods"}
	allowed := func(t *testing.T, s authorizationv1.SubjectAccessReviewStatus) {
		t.Helper()
		if !s.Allowed || s.Denied {
			t.Fatalf("access review: %+v, want allowed", s)
		}
	}
	return []crudCase{
		{
			gvr: corev1.SchemeGroupVersion.WithResource("componentstatuses"), kind: "ComponentStatus",
			newObj: func(n string, _ map[string]string) runtime.Object {
				return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: n}}
			},
			special: componentStatusesRow,
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("bindings"), kind: "Binding", namespaced: true,
			newObj: func(n string, _ map[string]string) runtime.Object {
				return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: crudNamespace},
					Target: corev1.ObjectReference{Kind: "Node", Name: "node-x"}}
			},
			special: bindingsRow,
		},
		review(schemaGVR{"authentication.k8s.io", "tokenreviews"}, "TokenReview", false,
			func() runtime.Object {
				return &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "not-a-token"}}
			},
			func(t *testing.T, o runtime.Object) {
				if s := o.(*authenticationv1.TokenReview).Status; s.Authenticated || s.User.Username != "" || s.Error == "" {
					t.Fatalf("review of a bad token: %+v", s)
				}
			}),
		review(schemaGVR{"authentication.k8s.io", "selfsubjectreviews"}, "SelfSubjectReview", false,
			func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
			func(t *testing.T, o runtime.Object) {
				u := o.(*authenticationv1.SelfSubjectReview).Status.UserInfo
				if u.Username == "" || !slices.Contains(u.Groups, "system:masters") || !slices.Contains(u.Groups, "system:authenticated") {
					t.Fatalf("self subject review: %+v", u)
				}
			}),
		review(schemaGVR{"authorization.k8s.io", "subjectaccessreviews"}, "SubjectAccessReview", false,
			func() runtime.Object {
				return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: "alice", Groups: masters, ResourceAttributes: podsInNS}}
			},
			func(t *testing.T, o runtime.Object) { allowed(t, o.(*authorizationv1.SubjectAccessReview).Status) }),
		review(schemaGVR{"authorization.k8s.io", "localsubjectaccessreviews"}, "LocalSubjectAccessReview", true,
			func() runtime.Object {
				return &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: crudNamespace},
					Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: masters, ResourceAttributes: podsInNS}}
			},
			func(t *testing.T, o runtime.Object) { allowed(t, o.(*authorizationv1.LocalSubjectAccessReview).Status) }),
		review(schemaGVR{"authorization.k8s.io", "selfsubjectaccessreviews"}, "SelfSubjectAccessReview", false,
			func() runtime.Object {
				return &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: podsInNS}}
			},
			func(t *testing.T, o runtime.Object) { allowed(t, o.(*authorizationv1.SelfSubjectAccessReview).Status) }),
		review(schemaGVR{"authorization.k8s.io", "selfsubjectrulesreviews"}, "SelfSubjectRulesReview", false,
			func() runtime.Object {
				return &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: crudNamespace}}
			},
			func(t *testing.T, o runtime.Object) {
				s := o.(*authorizationv1.SelfSubjectRulesReview).Status
				all := authorizationv1.ResourceRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}
				hasAll := slices.ContainsFunc(s.ResourceRules, func(r authorizationv1.ResourceRule) bool {
					return slices.Equal(r.Verbs, all.Verbs) && slices.Equal(r.APIGroups, all.APIGroups) && slices.Equal(r.Resources, all.Resources)
				})
				if !hasAll || s.Incomplete {
					t.Fatalf("rules review of an administrator: %+v", s)
				}
			}),
	}
}

// schemaGVR names a v1 resource of a group.
type schemaGVR struct{ group, resource string }

func (g schemaGVR) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: g.group, Version: "v1", Resource: g.resource}
}

// kubeVerbsOf are the verbs kube-apiserver serves for the case's resource.
func kubeVerbsOf(t *testing.T, c crudCase) []string {
	t.Helper()
	k, ok := kubeResources(t)[c.gvr]
	if !ok {
		t.Fatalf("kube-apiserver serves no %v", c.gvr)
	}
	return strings.Split(k.verbs, ",")
}

// createOnly is the row of a review: create answers the review; a
// request kube-apiserver refuses is a 422; every other verb is a 405.
func createOnly(check func(t *testing.T, answer runtime.Object)) func(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	return func(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
		answer, err := ops.create(ctx, c.newObj("", nil))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		check(t, answer)
		refuseOtherVerbs(t, ctx, c, ops)
	}
}

// refuseOtherVerbs checks the verbs the resource does not serve (those
// the client offers): on the collection they are a 405; on an object they
// are a 405 when objects can be read, and a 404 otherwise (kube-apiserver
// routes no object paths for a resource without get).
func refuseOtherVerbs(t *testing.T, ctx context.Context, c crudCase, ops crudOps) {
	t.Helper()
	verbs := kubeVerbsOf(t, c)
	collection := func(verb string, err error) {
		t.Helper()
		if !apierrors.IsMethodNotSupported(err) {
			t.Errorf("%s: want 405 MethodNotAllowed, got %v", verb, err)
		}
	}
	object := func(verb string, err error) {
		t.Helper()
		if slices.Contains(verbs, "get") {
			collection(verb, err)
		} else if !apierrors.IsNotFound(err) || err.Error() != "the server could not find the requested resource" {
			t.Errorf("%s of an object: want 404 (no such path), got %v", verb, err)
		}
	}
	if ops.get != nil && !slices.Contains(verbs, "get") {
		_, err := ops.get(ctx, "x")
		object("get", err)
	}
	if ops.list != nil && !slices.Contains(verbs, "list") {
		_, err := ops.list(ctx, metav1.ListOptions{})
		collection("list", err)
	}
	if ops.create != nil && !slices.Contains(verbs, "create") {
		_, err := ops.create(ctx, c.newObj("x", nil))
		collection("create", err)
	}
	if ops.update != nil && !slices.Contains(verbs, "update") {
		o := c.newObj("x", nil)
		m, _ := meta.Accessor(o)
		m.SetName("x")
		_, err := ops.update(ctx, o)
		object("update", err)
	}
	if ops.patch != nil && !slices.Contains(verbs, "patch") {
		_, err := ops.patch(ctx, "x", types.MergePatchType, []byte(`{}`))
		object("patch", err)
	}
	if ops.delete != nil && !slices.Contains(verbs, "delete") {
		object("delete", ops.delete(ctx, "x", metav1.DeleteOptions{}))
	}
	if ops.deleteCollection != nil && !slices.Contains(verbs, "deletecollection") {
		collection("deletecollection", ops.deleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	}
}

// componentStatusesRow reads the components' health; they cannot be
// written.
func componentStatusesRow(t *testing.T, ctx context.Context, _ crudEnv, c crudCase, ops crudOps) {
	items, err := ops.list(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if n := namesOf(items); !slices.Equal(n, []string{"controller-manager", "etcd-0", "scheduler"}) {
		t.Fatalf("componentstatuses: %v", n)
	}
	o, err := ops.get(ctx, "etcd-0")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	cs := o.(*corev1.ComponentStatus)
	if len(cs.Conditions) != 1 || cs.Conditions[0].Type != corev1.ComponentHealthy || cs.Conditions[0].Status != corev1.ConditionTrue {
		t.Fatalf("etcd-0: %+v", cs.Conditions)
	}
	if _, err := ops.get(ctx, "nothing"); !apierrors.IsNotFound(err) {
		t.Fatalf("get of an unknown component: want NotFound, got %v", err)
	}
	refuseOtherVerbs(t, ctx, c, ops)
}

// bindingsRow binds a pod by creating a Binding named after it.
func bindingsRow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	pods := env.cs.CoreV1().Pods(crudNamespace)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "obj-to-bind"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		zero := int64(0)
		if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Error(err)
		}
	}()
	if _, err := ops.create(ctx, c.newObj("obj-to-bind", nil)); err != nil {
		t.Fatalf("create binding: %v", err)
	}
	p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "node-x" {
		t.Fatalf("the bound pod: node %q, %v", p.Spec.NodeName, err)
	}
	if _, err := ops.create(ctx, c.newObj("obj-to-bind", nil)); !apierrors.IsConflict(err) {
		t.Fatalf("binding a bound pod: want Conflict, got %v", err)
	}
	if _, err := ops.create(ctx, c.newObj("obj-missing", nil)); !apierrors.IsNotFound(err) {
		t.Fatalf("binding a missing pod: want NotFound, got %v", err)
	}
	refuseOtherVerbs(t, ctx, c, ops)
}
