package node_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/authorizer/node"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func nodeUser(name string) authorizer.User {
	return authorizer.User{Name: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
}

func res(user authorizer.User, verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{User: user, Verb: verb, ResourceRequest: true, APIGroup: group,
		Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

// TestNodeAuthorizer: against a real server's watch caches, a node may
// read what its bound pods use and nothing else, its own Node and Lease,
// its pods by field selector; other users get no opinion.
func TestNodeAuthorizer(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := node.NewGraph()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); g.Run(runCtx, srv.API.NodeGraphSource(), nil) }()
	defer func() { stop(); <-done }()
	a := node.New(g)

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
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{
			NodeName: "node-a", ServiceAccountName: "default",
			Containers: []corev1.Container{{Name: "c", Image: "nginx",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}}},
			Volumes: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a1, b1 := nodeUser("node-a"), nodeUser("node-b")
	secretA := res(a1, "get", "", "secrets", "", "default", "creds")
	for d, _, _ := a.Authorize(ctx, secretA); d != authorizer.DecisionAllow; d, _, _ = a.Authorize(ctx, secretA) {
		select {
		case <-ctx.Done():
			t.Fatal("the graph never saw the pod")
		case <-time.After(20 * time.Millisecond):
		}
	}
	fieldSel := func(s string) fields.Requirements {
		sel, err := fields.ParseSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Requirements()
	}
	listMine := res(a1, "list", "", "pods", "", "", "")
	listMine.FieldSelector = fieldSel("spec.nodeName=node-a")
	listOthers := res(a1, "list", "", "pods", "", "", "")
	listOthers.FieldSelector = fieldSel("spec.nodeName=node-b")
	for _, tc := range []struct {
		name   string
		attrs  authorizer.Attributes
		want   authorizer.Decision
		reason string
	}{
		{"its pod's secret", secretA, authorizer.DecisionAllow, ""},
		{"watch its pod's secret", res(a1, "watch", "", "secrets", "", "default", "creds"), authorizer.DecisionAllow, ""},
		{"its pod's configmap", res(a1, "get", "", "configmaps", "", "default", "settings"), authorizer.DecisionAllow, ""},
		{"its pod's claim", res(a1, "get", "", "persistentvolumeclaims", "", "default", "data"), authorizer.DecisionAllow, ""},
		{"its pod's token", res(a1, "create", "", "serviceaccounts", "token", "default", "default"), authorizer.DecisionAllow, ""},
		{"its pod", res(a1, "get", "", "pods", "", "default", "web"), authorizer.DecisionAllow, ""},
		{"another node's secret", res(b1, "get", "", "secrets", "", "default", "creds"), authorizer.DecisionNoOpinion,
			"no relationship found between node 'node-b' and this object"},
		{"an unrelated secret", res(a1, "get", "", "secrets", "", "default", "other"), authorizer.DecisionNoOpinion,
			"no relationship found between node 'node-a' and this object"},
		{"list secrets", res(a1, "list", "", "secrets", "", "default", ""), authorizer.DecisionNoOpinion, "No Object name found"},
		{"write its secret", res(a1, "update", "", "secrets", "", "default", "creds"), authorizer.DecisionNoOpinion,
			"can only read resources of this type"},
		{"list its pods", listMine, authorizer.DecisionAllow, ""},
		{"list another node's pods", listOthers, authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"list all pods", res(a1, "list", "", "pods", "", "", ""), authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"its Node", res(a1, "get", "", "nodes", "", "", "node-a"), authorizer.DecisionAllow, ""},
		{"another Node", res(a1, "get", "", "nodes", "", "", "node-b"), authorizer.DecisionNoOpinion,
			"node 'node-a' cannot read 'node-b', only its own Node object"},
		{"all Nodes", res(a1, "list", "", "nodes", "", "", ""), authorizer.DecisionNoOpinion,
			"node 'node-a' cannot read all nodes, only its own Node object"},
		{"its Lease", res(a1, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), authorizer.DecisionAllow, ""},
		{"another Lease", res(a1, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-b"), authorizer.DecisionNoOpinion,
			"can only access node lease with the same name as the requesting node"},
		{"a Lease elsewhere", res(a1, "get", "coordination.k8s.io", "leases", "", "kube-system", "node-a"), authorizer.DecisionNoOpinion,
			`can only access leases in the "kube-node-lease" system namespace`},
		{"events", res(a1, "create", "", "events", "", "default", ""), authorizer.DecisionAllow, ""},
		{"services by the node rules", res(a1, "list", "", "services", "", "", ""), authorizer.DecisionAllow, ""},
		{"deployments", res(a1, "list", "apps", "deployments", "", "", ""), authorizer.DecisionNoOpinion, ""},
		{"not a node", res(authorizer.User{Name: "alice", Groups: []string{"system:nodes"}}, "get", "", "secrets", "", "default", "creds"),
			authorizer.DecisionNoOpinion, ""},
		{"no node name", res(authorizer.User{Name: "system:node:", Groups: []string{"system:nodes"}}, "get", "", "nodes", "", "", ""),
			authorizer.DecisionNoOpinion, `unknown node for user "system:node:"`},
	} {
		d, reason, err := a.Authorize(ctx, tc.attrs)
		if d != tc.want || reason != tc.reason || err != nil {
			t.Errorf("%s: %v %q %v; want %v %q", tc.name, d, reason, err, tc.want, tc.reason)
		}
	}

	// Deleting the pod takes its relations away.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	for {
		if d, _, _ := a.Authorize(ctx, secretA); d == authorizer.DecisionNoOpinion {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the secret stayed readable after its pod was deleted")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
