package sharding_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// allSeen waits until every key was reconciled after it had value v.
func allSeen(t *testing.T, j *journal, keys []types.NamespacedName, v string, timeout time.Duration) time.Duration {
	t.Helper()
	return eventually(t, timeout, "every object reconciled at v="+v, func() bool {
		for _, k := range keys {
			if !j.sawValue(k.String(), v) {
				return false
			}
		}
		return true
	})
}

// TestShardsMoveOnJoinAndDeath: a lone replica owns every shard; a second
// one joining gets half of them; when it dies (its network is cut, so it
// releases nothing) the first takes its shards back once their Leases
// expire, and reconciles the objects of its namespaces; a third joins and
// then leaves cleanly, handing its shards back at once.
func TestShardsMoveOnJoinAndDeath(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	keys := fixture(t, srv.RESTClient(t), 12, 3)
	j := &journal{}

	a := startReplica(t, cfg, "a", j)
	eventually(t, 10*time.Second, "a owns every shard", func() bool { return partition(a) })
	allSeen(t, j, keys, "0", 10*time.Second)

	b := startReplica(t, cfg, "b", j)
	took := eventually(t, 10*time.Second, "a and b share the shards 4/4", func() bool {
		return partition(a, b) && len(a.s.Owned()) == shards/2 && len(b.s.Owned()) == shards/2
	})
	t.Logf("rebalance on join took %v; a owns %v, b owns %v", took, a.s.Owned(), b.s.Owned())
	setAll(t, srv.RESTClient(t), keys, "1")
	allSeen(t, j, keys, "1", 10*time.Second)
	if j.count("b") == 0 {
		t.Fatal("b reconciled nothing after joining")
	}

	cut := time.Now()
	b.proxy.Cut()
	took = eventually(t, 3*leaseDuration, "a owns every shard after b died", func() bool { return partition(a) })
	t.Logf("a took b's shards %v after b's network was cut (lease duration %v)", took, leaseDuration)
	if took > leaseDuration+renewDeadline {
		t.Errorf("takeover took %v, more than the lease duration %v plus the renew deadline", took, leaseDuration)
	}
	setAll(t, srv.RESTClient(t), keys, "2")
	allSeen(t, j, keys, "2", 10*time.Second)
	t.Logf("every object reconciled at v=2 %v after the cut", time.Since(cut))

	c := startReplica(t, cfg, "c", j)
	eventually(t, 10*time.Second, "a and c share the shards 4/4", func() bool {
		return partition(a, c) && len(a.s.Owned()) == shards/2 && len(c.s.Owned()) == shards/2
	})
	c.stop(t)
	took = eventually(t, 3*leaseDuration, "a owns every shard after c left", func() bool { return partition(a) })
	t.Logf("a took c's released shards %v after c stopped", took)
	if took >= leaseDuration {
		t.Errorf("a released shard was taken after %v, as if it had to expire", took)
	}
	b.stop(t)
	a.stop(t)
	j.checkExclusive(t)
}

// TestNoKeyReconciledByTwoReplicasAtOnce: replicas join, leave and are cut
// off at random while objects change and every replica keeps reconciling
// what it owns. No two replicas' reconciles of one key ever overlap, and
// after the last change the live replicas own every shard and reconcile
// every object.
func TestNoKeyReconciledByTwoReplicasAtOnce(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := testingSeed(); s != 0 {
		seed = s
	}
	t.Logf("seed %d (SHARDING_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	keys := fixture(t, srv.RESTClient(t), 12, 3)
	j := &journal{}

	stopWriter := startWriter(srv.RESTClient(t), keys, rng.Uint64())
	var live, all []*replica
	next := 0
	join := func() {
		r := startReplica(t, cfg, "r"+strconv.Itoa(next), j)
		next++
		live = append(live, r)
		all = append(all, r)
	}
	join()
	join()
	for step := range 10 {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		switch k := rng.IntN(3); {
		case k == 0 && len(live) < 4 || len(live) == 1:
			join()
			t.Logf("step %d: %s joins", step, live[len(live)-1].id)
		default:
			i := rng.IntN(len(live))
			r := live[i]
			live = append(live[:i], live[i+1:]...)
			if k == 1 {
				t.Logf("step %d: %s leaves", step, r.id)
				go r.cancel() // stopped for good by its cleanup
			} else {
				t.Logf("step %d: %s is cut off", step, r.id)
				r.proxy.Cut()
			}
		}
	}
	stopWriter()
	took := eventually(t, 3*leaseDuration, "the live replicas own every shard", func() bool { return partition(live...) })
	t.Logf("after the last change the %d live replicas owned every shard within %v", len(live), took)
	setAll(t, srv.RESTClient(t), keys, "final")
	allSeen(t, j, keys, "final", 10*time.Second)
	for _, r := range all {
		r.stop(t)
	}
	j.checkExclusive(t)
	for _, r := range all {
		t.Logf("%s: %d reconciles", r.id, j.count(r.id))
	}
}

func testingSeed() uint64 {
	s, _ := strconv.ParseUint(os.Getenv("SHARDING_SEED"), 10, 64)
	return s
}

// startWriter keeps updating random objects until the returned stop.
func startWriter(c *rest.Client, keys []types.NamespacedName, seed uint64) (stop func()) {
	rng := rand.New(rand.NewPCG(seed, 1))
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; n++ {
			k := keys[rng.IntN(len(keys))]
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
				Data: map[string]string{"v": fmt.Sprintf("w%d", n)}}
			_, _ = cms.Namespace(k.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
