package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

const (
	shardedLease  = 3 * time.Second
	shardedShards = 8
)

// startShardedControllerManager runs `setpoint controller-manager
// --sharded` with a short Lease and a fixed identity.
func startShardedControllerManager(t *testing.T, kubeconfig, id string) *proc {
	t.Helper()
	return startProc(t, "controller-manager "+id, "controller-manager", "--kubeconfig", kubeconfig,
		"--sharded", "--shards", strconv.Itoa(shardedShards), "--leader-elect-identity", id,
		"--leader-elect-lease-duration", shardedLease.String(), "--leader-elect-renew-deadline", "2s",
		"--leader-elect-retry-period", "500ms")
}

// shardHolders maps each shard of the controller manager to its holder.
func shardHolders(t *testing.T, c *rest.Client) map[int]string {
	t.Helper()
	ls, err := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c,
		coordinationv1.SchemeGroupVersion.WithResource("leases"), true).Namespace("kube-system").
		List(context.Background(), metav1.ListOptions{LabelSelector: sharding.GroupLabel + "=kube-controller-manager"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, l := range ls.Items {
		i, err := strconv.Atoi(strings.TrimPrefix(l.Name, "kube-controller-manager-shard-"))
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			continue
		}
		out[i] = *l.Spec.HolderIdentity
	}
	return out
}

// TestKill9ShardedControllerManagerReplica: three `setpoint controller-manager
// --sharded` replicas share the shards; the one owning the most namespaces
// is killed with SIGKILL (it releases nothing), and the Deployments of its
// namespaces, scaled right after the kill, converge once the others took
// its shards over (after the lease duration), while the rest of the
// cluster is undisturbed.
//
// The cluster stores its data in a real 3-member etcd cluster. The victim
// is the leading replica (it also runs the garbage collector, namespace and
// node-lifecycle controllers) whenever it owns a namespace's shard: then
// the leader Lease must move too, and a namespace deletion, which only the
// leader's namespace controller finishes, must complete.
func TestKill9ShardedControllerManagerReplica(t *testing.T) {
	// Not parallel: it bounds the failover time (lease plus renew deadline),
	// which the load of the parallel tests would stretch.
	etcd := etcdtest.StartCluster(t, 3)
	api := startUp(t, 3, "--no-controller-manager", "--storage", "etcd",
		"--etcd-endpoints", strings.Join(etcd.Endpoints(), ","), "--etcd-prefix", "/e2e-sharding")
	c := restClient(t, api.kubeconfig)
	cms := map[string]*proc{}
	for i := range 3 {
		id := fmt.Sprintf("cm-%d", i)
		cms[id] = startShardedControllerManager(t, api.kubeconfig, id)
	}
	eventually(t, 60*time.Second, "three replicas holding every shard", func() string {
		h := shardHolders(t, c)
		ids := map[string]bool{}
		for _, id := range h {
			ids[id] = true
		}
		if len(h) != shardedShards || len(ids) != 3 {
			return fmt.Sprintf("holders %v", h)
		}
		return ""
	})

	ctx := context.Background()
	nsRes := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	ds := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, appsv1.SchemeGroupVersion.WithResource("deployments"), true)
	var nss []string
	for i := range 9 {
		ns := fmt.Sprintf("team-%d", i)
		nss = append(nss, ns)
		if _, err := nsRes.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		api.kubectl(t, deploymentManifest("web", 2, "nginx:1.25", ""), "apply", "-n", ns, "-f", "-")
	}
	for _, ns := range nss {
		waitRunning(t, c, ns, "app=web", 2, 60*time.Second)
	}

	holders := shardHolders(t, c)
	owned := map[string][]string{}
	for _, ns := range nss {
		id := holders[sharding.ShardOf(ns, shardedShards)]
		owned[id] = append(owned[id], ns)
	}
	leases := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, coordinationv1.SchemeGroupVersion.WithResource("leases"), true).Namespace("kube-system")
	leaderOf := func() string {
		l, err := leases.Get(ctx, "kube-controller-manager", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	victim := leaderOf()
	if len(owned[victim]) == 0 {
		for id := range cms {
			if victim == "" || len(owned[id]) > len(owned[victim]) {
				victim = id
			}
		}
	}
	killsLeader := victim == leaderOf()
	t.Logf("namespaces by replica: %v; killing %s", owned, victim)
	killed := time.Now()
	cms[victim].kill9()
	for _, ns := range owned[victim] {
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
	eventually(t, 3*shardedLease, "the survivors hold every shard", func() string {
		for i, id := range shardHolders(t, c) {
			if id == victim {
				return fmt.Sprintf("shard %d still held by %s", i, id)
			}
		}
		return ""
	})
	moved := time.Since(killed)
	if killsLeader {
		eventually(t, 3*shardedLease, "another replica leads", func() string {
			if l := leaderOf(); l == victim || l == "" {
				return "leader " + l
			}
			return ""
		})
		t.Logf("the leader Lease moved %v after the kill", time.Since(killed))
		api.kubectl(t, "", "delete", "namespace", nss[0], "--timeout=60s")
		nss = nss[1:]
	}
	for _, ns := range owned[victim] {
		if !slices.Contains(nss, ns) {
			continue // deleted above
		}
		waitRunning(t, c, ns, "app=web", 3, 60*time.Second)
		eventually(t, 30*time.Second, ns+"/web rolled out", func() string {
			d, err := ds.Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if !rolloutDone(d) {
				return fmt.Sprintf("status %+v", d.Status)
			}
			return ""
		})
	}
	t.Logf("the victim's shards moved %v after the kill (lease %v); its %d namespaces converged at 3 replicas %v after it",
		moved, shardedLease, len(owned[victim]), time.Since(killed))
	if moved > shardedLease+2*time.Second {
		t.Errorf("shards moved %v after the kill, more than the lease duration plus the renew deadline", moved)
	}
	for _, ns := range nss {
		want := 2
		for _, v := range owned[victim] {
			if v == ns {
				want = 3
			}
		}
		waitRunning(t, c, ns, "app=web", want, 30*time.Second)
	}
}
