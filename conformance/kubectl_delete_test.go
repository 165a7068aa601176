package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlDelete: kubectl delete plain, with --cascade=background,
// foreground and orphan (each with its outcome for the ReplicaSet and the
// pods), --grace-period (and --force), -l, --all and --ignore-not-found.
func TestKubectlDelete(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()

	// deploy creates a 2-replica deployment and waits for its pods.
	deploy := func(t *testing.T, name string) {
		t.Helper()
		kubectl(t, env, krDeployment(name, 2, "nginx"), "apply", "-f", "-")
		kubectl(t, env, "", "rollout", "status", "deployment/"+name, "--timeout=60s")
		krWaitPods(t, cs, "default", "app="+name, 2)
	}
	// dependents counts the deployment's ReplicaSets and pods.
	dependents := func(t *testing.T, name string) (rs, pods int) {
		t.Helper()
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		return len(rss.Items), len(ps.Items)
	}
	gone := func(t *testing.T, args ...string) {
		t.Helper()
		r := kubectlRun(t, env, "", append([]string{"get"}, args...)...)
		if r.Err == nil || !strings.Contains(r.Stderr, "NotFound") {
			t.Errorf("get %v after delete: %v %s %s", args, r.Err, r.Stdout, r.Stderr)
		}
	}

	t.Run("plain", func(t *testing.T) {
		kubectl(t, env, "", "create", "configmap", "one")
		if out := kubectl(t, env, "", "delete", "configmap", "one"); out != "configmap \"one\" deleted\n" {
			t.Errorf("delete: %q", out)
		}
		gone(t, "configmap", "one")
		r := krFails(t, env, "", "delete", "configmap", "one")
		if r.Stderr != "Error from server (NotFound): configmaps \"one\" not found\n" {
			t.Errorf("delete of a missing object: %q", r.Stderr)
		}
		if out := kubectl(t, env, "", "delete", "configmap", "one", "--ignore-not-found"); out != "" {
			t.Errorf("delete --ignore-not-found: %q", out)
		}
	})

	t.Run("cascade=background", func(t *testing.T) {
		deploy(t, "bg")
		if out := kubectl(t, env, "", "delete", "deployment", "bg", "--cascade=background"); out != "deployment.apps \"bg\" deleted\n" {
			t.Errorf("delete: %q", out)
		}
		gone(t, "deployment", "bg")
		krEventually(t, 60*time.Second, func() (bool, string) {
			rs, pods := dependents(t, "bg")
			return rs == 0 && pods == 0, fmt.Sprintf("%d replicasets, %d pods left", rs, pods)
		})
	})

	t.Run("cascade=foreground", func(t *testing.T) {
		deploy(t, "fg")
		// kubectl waits until the deployment is gone; in the foreground
		// the garbage collector removes it only after its dependents.
		if out := kubectl(t, env, "", "delete", "deployment", "fg", "--cascade=foreground"); out != "deployment.apps \"fg\" deleted\n" {
			t.Errorf("delete: %q", out)
		}
		gone(t, "deployment", "fg")
		if rs, pods := dependents(t, "fg"); rs != 0 || pods != 0 {
			t.Errorf("deployment gone while %d replicasets and %d pods remain", rs, pods)
		}
	})

	t.Run("cascade=foreground holds the owner with a finalizer", func(t *testing.T) {
		// A pod on a node without an agent is never stopped, so the
		// foreground deletion of its ReplicaSet stays visible.
		kubectl(t, env, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: held}
spec:
  replicas: 1
  selector: {matchLabels: {app: held}}
  template:
    metadata: {labels: {app: held}}
    spec:
      nodeName: ghost
      containers: [{name: c, image: nginx}]
`, "apply", "-f", "-")
		krEventually(t, 30*time.Second, func() (bool, string) {
			_, pods := dependents(t, "held")
			return pods == 1, fmt.Sprintf("%d pods", pods)
		})
		live, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out := kubectl(t, env, "", "delete", "replicaset", "held", "--cascade=foreground", "--wait=false"); out != "replicaset.apps \"held\" deleted\n" {
			t.Errorf("delete: %q", out)
		}
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "held", metav1.GetOptions{})
		if err != nil || rs.DeletionTimestamp == nil || len(rs.Finalizers) != 1 || rs.Finalizers[0] != metav1.FinalizerDeleteDependents {
			t.Fatalf("replicaset during foreground deletion: %v %+v", err, rs.ObjectMeta)
		}
		// As in Kubernetes, starting the deletion moves the generation.
		if rs.Generation != live.Generation+1 {
			t.Errorf("generation %d after the delete began, want %d", rs.Generation, live.Generation+1)
		}
		krEventually(t, 30*time.Second, func() (bool, string) {
			p, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=held"})
			return err == nil && len(p.Items) == 1 && p.Items[0].DeletionTimestamp != nil, "pod not being deleted"
		})
		// Forcing the pod away lets the owner go.
		p, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=held"})
		kubectl(t, env, "", "delete", "pod", p.Items[0].Name, "--grace-period=0", "--force")
		kubectl(t, env, "", "wait", "--for=delete", "replicaset/held", "--timeout=30s")
	})

	t.Run("cascade=orphan", func(t *testing.T) {
		deploy(t, "or")
		rss, _ := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=or"})
		before, _ := krPods(t, cs, "default", "app=or")
		if out := kubectl(t, env, "", "delete", "deployment", "or", "--cascade=orphan"); out != "deployment.apps \"or\" deleted\n" {
			t.Errorf("delete: %q", out)
		}
		gone(t, "deployment", "or")
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, rss.Items[0].Name, metav1.GetOptions{})
		if err != nil || len(rs.OwnerReferences) != 0 || rs.DeletionTimestamp != nil || *rs.Spec.Replicas != 2 {
			t.Fatalf("orphaned replicaset: %v %+v", err, rs.ObjectMeta)
		}
		// The pods are the ReplicaSet's, not the deployment's: untouched.
		time.Sleep(time.Second)
		after, total := krPods(t, cs, "default", "app=or")
		uids := func(ps []corev1.Pod) []string {
			var u []string
			for _, p := range ps {
				u = append(u, string(p.UID))
			}
			slices.Sort(u)
			return u
		}
		if total != 2 || !slices.Equal(uids(after), uids(before)) {
			t.Errorf("pods after orphaning: %v of %d, were %v", uids(after), total, uids(before))
		}
		for _, p := range after {
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != rs.UID {
				t.Errorf("pod %s owners %+v", p.Name, p.OwnerReferences)
			}
		}
	})

	t.Run("grace-period", func(t *testing.T) {
		// No agent runs node "ghost": the pod stays terminating for as
		// long as nobody forces it.
		kubectl(t, env, "", "run", "slow", "--image=nginx", "--overrides", `{"spec":{"nodeName":"ghost"}}`)
		if g := kubectl(t, env, "", "get", "pod", "slow", "-o", "jsonpath={.metadata.generation}"); g != "1" {
			t.Errorf("new pod generation %q", g)
		}
		before := time.Now()
		if out := kubectl(t, env, "", "delete", "pod", "slow", "--grace-period=60", "--wait=false"); out != "pod \"slow\" deleted\n" {
			t.Errorf("delete --grace-period=60: %q", out)
		}
		var p corev1.Pod
		krJSON(t, env, &p, "get", "pod", "slow", "-o", "json")
		if p.Generation != 2 {
			t.Errorf("pod generation %d after the delete began, want 2", p.Generation)
		}
		if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 60 || p.DeletionTimestamp == nil ||
			p.DeletionTimestamp.Time.Before(before.Add(58*time.Second)) || p.DeletionTimestamp.Time.After(time.Now().Add(61*time.Second)) {
			t.Errorf("pod after delete --grace-period=60: deletionGracePeriodSeconds %v deletionTimestamp %v", p.DeletionGracePeriodSeconds, p.DeletionTimestamp)
		}
		// get shows it Terminating.
		if _, rows := krTable(kubectl(t, env, "", "get", "pod", "slow")); len(rows) != 1 || rows[0][2] != "Terminating" {
			t.Errorf("get of a terminating pod: %v", rows)
		}
		// A delete without --grace-period leaves the pending deletion
		// alone; a shorter grace period counts from when it began.
		first := p.DeletionTimestamp.Time
		time.Sleep(1100 * time.Millisecond)
		kubectl(t, env, "", "delete", "pod", "slow", "--wait=false")
		krJSON(t, env, &p, "get", "pod", "slow", "-o", "json")
		if *p.DeletionGracePeriodSeconds != 60 || !p.DeletionTimestamp.Time.Equal(first) {
			t.Errorf("second delete without --grace-period: grace %d deadline %v, want 60 and %v", *p.DeletionGracePeriodSeconds, p.DeletionTimestamp, first)
		}
		kubectl(t, env, "", "delete", "pod", "slow", "--grace-period=30", "--wait=false")
		krJSON(t, env, &p, "get", "pod", "slow", "-o", "json")
		if *p.DeletionGracePeriodSeconds != 30 || p.Generation != 2 || !p.DeletionTimestamp.Time.Equal(first.Add(-30*time.Second)) {
			t.Errorf("after --grace-period=30: grace %d generation %d deadline %v, want 30, 2 and %v",
				*p.DeletionGracePeriodSeconds, p.Generation, p.DeletionTimestamp, first.Add(-30*time.Second))
		}
		r := kubectlRun(t, env, "", "delete", "pod", "slow", "--grace-period=0", "--force")
		if r.Err != nil || r.Stdout != "pod \"slow\" force deleted\n" || !strings.Contains(r.Stderr, "Immediate deletion does not wait for confirmation") {
			t.Errorf("force delete: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		gone(t, "pod", "slow")
		// --now is --grace-period=1; a pod on a live node is stopped by
		// its agent and kubectl waits until it is gone.
		kubectl(t, env, "", "run", "quick", "--image=nginx")
		kubectl(t, env, "", "wait", "--for=jsonpath={.status.phase}=Running", "pod/quick", "--timeout=30s")
		if out := kubectl(t, env, "", "delete", "pod", "quick", "--now"); out != "pod \"quick\" deleted\n" {
			t.Errorf("delete --now: %q", out)
		}
		gone(t, "pod", "quick")
	})

	t.Run("-l and --all", func(t *testing.T) {
		// kube-controller-manager's root-ca-certificate-publisher keeps
		// kube-root-ca.crt in every namespace: it is listed, deleted by
		// --all, and comes back.
		waitNames(t, env, []string{"get", "configmaps"}, []string{"kube-root-ca.crt"})
		for _, n := range []string{"l1", "l2", "l3"} {
			kubectl(t, env, "", "create", "configmap", n)
		}
		kubectl(t, env, "", "label", "configmap", "l1", "l2", "drop=yes")
		if out := kubectl(t, env, "", "delete", "configmaps", "-l", "drop=yes"); out != "configmap \"l1\" deleted\nconfigmap \"l2\" deleted\n" {
			t.Errorf("delete -l: %q", out)
		}
		if got := krNames(kubectl(t, env, "", "get", "configmaps")); !slices.Equal(got, []string{"kube-root-ca.crt", "l3"}) {
			t.Errorf("configmaps after delete -l: %v", got)
		}
		kubectl(t, env, "", "create", "namespace", "keep")
		kubectl(t, env, "", "create", "configmap", "elsewhere", "-n", "keep")
		kubectl(t, env, "", "create", "configmap", "l4")
		if out := kubectl(t, env, "", "delete", "configmaps", "--all"); out != "configmap \"kube-root-ca.crt\" deleted\nconfigmap \"l3\" deleted\nconfigmap \"l4\" deleted\n" {
			t.Errorf("delete --all: %q", out)
		}
		// kube-system/setpoint-default-storageclass is setpoint's record that
		// it installed the default StorageClass once (no kube counterpart);
		// kube-system/extension-apiserver-authentication is written by every
		// API server at start, as kube-apiserver does.
		if out := kubectl(t, env, "", "get", "configmaps", "-A", "-o", "name", "--field-selector",
			"metadata.name!=kube-root-ca.crt,metadata.name!=setpoint-default-storageclass,metadata.name!=extension-apiserver-authentication"); out != "configmap/elsewhere\n" {
			t.Errorf("configmaps left: %q (--all is one namespace)", out)
		}
		waitNames(t, env, []string{"get", "configmaps"}, []string{"kube-root-ca.crt"})
		waitNames(t, env, []string{"get", "configmaps", "-n", "keep"}, []string{"elsewhere", "kube-root-ca.crt"})
		r := kubectlRun(t, env, "", "delete", "configmaps", "-l", "drop=yes")
		if r.Err != nil || r.Stdout != "No resources found\n" {
			t.Errorf("delete -l with no match: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
	})
}

// waitNames waits (10 s) until `kubectl <args>` lists exactly want.
func waitNames(t *testing.T, env *testenv.Environment, args []string, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := krNames(kubectl(t, env, "", args...))
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %v: %v, want %v", args, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
