package noderestriction_test

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/admission/noderestriction"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func nodeUser(name string) registry.UserInfo {
	return registry.UserInfo{Name: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
}

// TestNodeRestriction runs the plugin against a real server's objects:
// each node may write its own Node, Lease, pods' status, evictions and
// tokens of its pods; everything of another node is refused with kube's
// 403 wording; other users pass.
func TestNodeRestriction(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	cfg, err := rest.ConfigFromKubeconfig(srv.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // not paced by the client default of 5 requests per second
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	nodes := rest.For[*corev1.Node, *corev1.NodeList](c, corev1.SchemeGroupVersion.WithResource("nodes"), false)
	nodeA, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default")
	podOn := func(name, node string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	onA, onB := podOn("on-a", "a"), podOn("on-b", "b")
	relabelled := onA.DeepCopy()
	relabelled.Labels["app"] = "y"
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "a", UID: nodeA.UID, Controller: ptr.To(true)}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "static-a", Namespace: "default",
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	mirrorWithSecret := mirror.DeepCopy()
	mirrorWithSecret.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}}}}
	tainted := nodeA.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	labelled := nodeA.DeepCopy()
	labelled.Labels = map[string]string{"node-restriction.kubernetes.io/pool": "x", "kubernetes.io/hostname": "a"}
	tokenFor := func(p *corev1.Pod) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}}}
	}
	req := func(ns, name string, u registry.UserInfo) registry.Request {
		return registry.Request{Namespace: ns, Name: name, User: u}
	}
	a := nodeUser("a")
	p := noderestriction.New()
	for _, tc := range []struct {
		name  string
		attrs registry.Attributes
		want  string // "" allowed
	}{
		{"own pod status", registry.Attributes{Operation: registry.Update, Subresource: "status", Object: onA, Old: onA, Request: req("default", "on-a", a)}, ""},
		{"other node's pod status", registry.Attributes{Operation: registry.Update, Subresource: "status", Object: onB, Old: onB, Request: req("default", "on-b", a)},
			`pods "on-b" is forbidden: node "a" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", registry.Attributes{Operation: registry.Update, Subresource: "status", Object: relabelled, Old: onA, Request: req("default", "on-a", a)},
			`pods "on-a" is forbidden: node "a" cannot update labels through pod status`},
		{"delete own pod", registry.Attributes{Operation: registry.Delete, Old: onA, Request: req("default", "on-a", a)}, ""},
		{"delete other node's pod", registry.Attributes{Operation: registry.Delete, Old: onB, Request: req("default", "on-b", a)},
			`pods "on-b" is forbidden: node "a" can only delete pods with spec.nodeName set to itself`},
		{"create a plain pod", registry.Attributes{Operation: registry.Create, Object: onA.DeepCopy(), Request: req("default", "", a)},
			`pods "on-a" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "a" can only create mirror pods`},
		{"create a mirror pod", registry.Attributes{Operation: registry.Create, Object: mirror, Request: req("default", "", a)}, ""},
		{"mirror pod with a secret", registry.Attributes{Operation: registry.Create, Object: mirrorWithSecret, Request: req("default", "", a)},
			`pods "static-a" is forbidden: node "a" can not create pods that reference secrets (via spec.volumes)`},
		{"evict own pod", registry.Attributes{Operation: registry.Create, Subresource: "eviction", Object: &policyv1.Eviction{}, Request: req("default", "on-a", a)}, ""},
		{"evict other node's pod", registry.Attributes{Operation: registry.Create, Subresource: "eviction", Object: &policyv1.Eviction{}, Request: req("default", "on-b", a)},
			`pods "on-b" is forbidden: node a can only evict pods with spec.nodeName set to itself`},
		{"update own Node", registry.Attributes{Operation: registry.Update, Object: nodeA, Old: nodeA, Request: req("", "a", a)}, ""},
		{"update another Node", registry.Attributes{Operation: registry.Update, Object: nodeA, Old: nodeA, Request: req("", "b", a)},
			`nodes "b" is forbidden: node "a" is not allowed to modify node "b"`},
		{"taint itself", registry.Attributes{Operation: registry.Update, Object: tainted, Old: nodeA, Request: req("", "a", a)},
			`nodes "a" is forbidden: node "a" is not allowed to modify taints`},
		{"restricted labels", registry.Attributes{Operation: registry.Update, Object: labelled, Old: nodeA, Request: req("", "a", a)},
			`nodes "a" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool`},
		{"own Lease", registry.Attributes{Operation: registry.Create, Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, Request: req("kube-node-lease", "", a)}, ""},
		{"another Lease", registry.Attributes{Operation: registry.Create, Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, Request: req("kube-node-lease", "", a)},
			`leases.coordination.k8s.io "b" is forbidden: can only access node lease with the same name as the requesting node`},
		{"token of own pod", registry.Attributes{Operation: registry.Create, Subresource: "token", Object: tokenFor(onA), Request: req("default", "default", a)}, ""},
		{"token of other node's pod", registry.Attributes{Operation: registry.Create, Subresource: "token", Object: tokenFor(onB), Request: req("default", "default", a)},
			`serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{"unbound token", registry.Attributes{Operation: registry.Create, Subresource: "token", Object: &authenticationv1.TokenRequest{}, Request: req("default", "default", a)},
			`serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"not a node", registry.Attributes{Operation: registry.Update, Subresource: "status", Object: onB, Old: onB,
			Request: req("default", "on-b", registry.UserInfo{Name: "alice"})}, ""},
	} {
		_, err := p.Admit(ctx, srv.API.Env(), &tc.attrs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !apierrors.IsForbidden(err)):
			t.Errorf("%s: got %v, want 403 %q", tc.name, err, tc.want)
		}
	}
}
