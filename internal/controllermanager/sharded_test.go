package controllermanager_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

const shardPrefix = "kube-controller-manager-shard-"

// TestShardedControllerManagerLeaderKilled runs two sharded controller
// managers: both own shards and the Deployments of every namespace
// converge. Then the leader is cut off from the API server (as if killed:
// it releases nothing). The other takes the leader Lease within the lease
// duration and runs the unsharded controllers (a namespace deletion
// completes), takes the dead replica's shards, and converges the
// Deployments of its namespaces after a scale.
func TestShardedControllerManagerLeaderKilled(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	c := srv.RESTClient(t)
	ctx := context.Background()

	a := startReplica(t, cfg, "a")
	select {
	case <-a.mgr.Elected():
	case <-time.After(20 * time.Second):
		t.Fatal("a never led")
	}
	b := startReplica(t, cfg, "b")

	nss := make([]string, 6)
	nsRes := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	ds := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, deployGVR, true)
	for i := range nss {
		nss[i] = fmt.Sprintf("team-%d", i)
		if _, err := nsRes.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nss[i]}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ds.Namespace(nss[i]).Create(ctx, deployment(nss[i], 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "a and b hold 4 shards each", func() string {
		n := map[string]int{}
		for _, h := range holders(t, c, shardPrefix) {
			n[h]++
		}
		if n["a"] != 4 || n["b"] != 4 {
			return fmt.Sprintf("shard holders %v", n)
		}
		return ""
	})
	eventually(t, 30*time.Second, "Deployments at 2 replicas", func() string { return converged(c, nss, 2) })

	cut := time.Now()
	a.proxy.Cut()
	select {
	case <-b.mgr.Elected():
		took := time.Since(cut)
		t.Logf("b leads %v after the leader was cut off (lease duration %v)", took, leaseDuration)
		if took > leaseDuration+renewDeadline {
			t.Errorf("handover took %v, more than the lease duration plus the renew deadline", took)
		}
	case <-time.After(3 * leaseDuration):
		t.Fatal("b never took the leader Lease")
	}
	took := eventually(t, 3*leaseDuration, "b holds every shard", func() string {
		for name, h := range holders(t, c, shardPrefix) {
			if h != "b" {
				return name + " held by " + h
			}
		}
		return ""
	})
	t.Logf("b holds every shard %v after the cut (waited %v)", time.Since(cut), took)

	for _, ns := range nss {
		d, err := ds.Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d = d.DeepCopy()
		d.Spec.Replicas = ptr.To[int32](3)
		if _, err := ds.Namespace(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "Deployments at 3 replicas", func() string { return converged(c, nss, 3) })

	// The namespace controller runs only on the leader, now b.
	if err := nsRes.Delete(ctx, nss[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "namespace "+nss[0]+" finalized", func() string {
		_, err := nsRes.Get(ctx, nss[0], metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		return fmt.Sprintf("still there (%v)", err)
	})
	if err := a.stop(t); !errors.Is(err, manager.ErrLeaderElectionLost) {
		t.Errorf("a's Start = %v, want ErrLeaderElectionLost", err)
	}
	if err := b.stop(t); err != nil {
		t.Errorf("b's Start = %v", err)
	}
}
