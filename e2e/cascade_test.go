package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// countPods returns how many pods of the selector exist (terminating ones
// included) and how many of them carry ownerReferences.
func countPods(t *testing.T, c *rest.Client, ns, selector string) (all, owned int) {
	t.Helper()
	list, err := podsOf(c).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	for _, p := range list.Items {
		all++
		if len(p.OwnerReferences) > 0 {
			owned++
		}
	}
	return all, owned
}

func replicaSetsOf(c *rest.Client) *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList] {
	return rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c, appsv1.SchemeGroupVersion.WithResource("replicasets"), true)
}

// TestUpCascadingDelete is the second scenario: background,
// foreground and orphan deletion of Deployments, and namespace deletion.
func TestUpCascadingDelete(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 3)
	c := restClient(t, cl.kubeconfig)
	for _, name := range []string{"bg", "fg", "orphan"} {
		cl.kubectl(t, deploymentManifest(name, 4, "nginx:1.25", ""), "apply", "-f", "-")
	}
	for _, name := range []string{"bg", "fg", "orphan"} {
		cl.kubectl(t, "", "rollout", "status", "deployment/"+name, "--timeout=120s")
		waitRunning(t, c, "default", "app="+name, 4, 60*time.Second)
	}

	// Background (kubectl's default): the Deployment goes at once, then its
	// ReplicaSet and pods.
	cl.kubectl(t, "", "delete", "deployment", "bg")
	eventually(t, 60*time.Second, "background deletion", func() string {
		rs, _ := replicaSetsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=bg"})
		all, _ := countPods(t, c, "default", "app=bg")
		if len(rs.Items)+all > 0 {
			return fmt.Sprintf("%d replicasets, %d pods left", len(rs.Items), all)
		}
		return ""
	})

	// Foreground: the Deployment is deleted only after its dependents; its
	// DELETED event comes after the last pod has gone.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace("default")
	dl, err := deploys.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := deploys.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=fg", ResourceVersion: dl.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Stop()
	cl.kubectl(t, "", "delete", "deployment", "fg", "--cascade=foreground", "--wait=false")
	sawFinalizer := false
	for ev := range dw.ResultChan() {
		d, ok := ev.Object.(*appsv1.Deployment)
		if !ok {
			t.Fatalf("watch: %v", ev.Object)
		}
		if ev.Type != watch.Deleted {
			for _, f := range d.Finalizers {
				sawFinalizer = sawFinalizer || f == metav1.FinalizerDeleteDependents
			}
			continue
		}
		all, _ := countPods(t, c, "default", "app=fg")
		rs, _ := replicaSetsOf(c).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=fg"})
		if all != 0 || len(rs.Items) != 0 {
			t.Fatalf("foreground: the Deployment went while %d pods and %d replicasets remained", all, len(rs.Items))
		}
		break
	}
	if !sawFinalizer {
		t.Fatal("foreground: the Deployment never carried the foregroundDeletion finalizer")
	}

	// Orphan: the pods (and the ReplicaSet) stay, with no ownerReferences.
	cl.kubectl(t, "", "delete", "deployment", "orphan", "--cascade=orphan")
	eventually(t, 60*time.Second, "orphaned dependents", func() string {
		rs, _ := replicaSetsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=orphan"})
		if len(rs.Items) != 1 || len(rs.Items[0].OwnerReferences) != 0 {
			return fmt.Sprintf("replicasets: %d (want 1 without owner)", len(rs.Items))
		}
		all, owned := countPods(t, c, "default", "app=orphan")
		if all != 4 {
			return fmt.Sprintf("%d pods (want 4)", all)
		}
		if owned != 4 { // they keep their ReplicaSet as owner
			return fmt.Sprintf("%d of 4 pods owned by the surviving replicaset", owned)
		}
		return ""
	})
	if _, err := deploys.Get(context.Background(), "orphan", metav1.GetOptions{}); err == nil {
		t.Fatal("orphan: the Deployment still exists")
	}
	cl.kubectl(t, "", "delete", "replicaset", "-l", "app=orphan", "--cascade=orphan")
	eventually(t, 60*time.Second, "pods orphaned by their replicaset", func() string {
		all, owned := countPods(t, c, "default", "app=orphan")
		if all != 4 || owned != 0 {
			return fmt.Sprintf("%d pods, %d still owned", all, owned)
		}
		return ""
	})

	// Namespace deletion removes everything in it, then the namespace.
	cl.kubectl(t, "", "create", "namespace", "doomed")
	cl.kubectl(t, deploymentManifest("app", 3, "nginx:1.25", ""), "apply", "-n", "doomed", "-f", "-")
	cl.kubectl(t, "", "create", "configmap", "settings", "-n", "doomed", "--from-literal=a=b")
	cl.kubectl(t, "", "create", "service", "clusterip", "app", "-n", "doomed", "--tcp=80:80")
	waitRunning(t, c, "doomed", "app=app", 3, 90*time.Second)
	cl.kubectl(t, "", "delete", "namespace", "doomed", "--timeout=120s")
	out, errOut, err := cl.kubectlErr(t, "", "get", "namespace", "doomed")
	if err == nil || !strings.Contains(errOut, "NotFound") {
		t.Fatalf("namespace still there after delete: %s %s", out, errOut)
	}
	all, _ := countPods(t, c, "doomed", "")
	if all != 0 {
		t.Fatalf("%d pods left in the deleted namespace", all)
	}
}
