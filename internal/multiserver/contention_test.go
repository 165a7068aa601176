package multiserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestUnconditionalPatchesOnOneObjectAllSucceed: 16 writers, through two
// replicas, merge-patch their own key of one ConfigMap at once. A patch
// names no resourceVersion, so the server retries its lost races until it
// wins (as Kubernetes does): every patch succeeds and every key lands.
func TestUnconditionalPatchesOnOneObjectAllSucceed(t *testing.T) {
	servers := startServers(t, startEtcd(t), 2)
	clients := []*configMaps{cms(only(t, servers[0])), cms(only(t, servers[1]))}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := clients[0].Create(ctx, configMap("hot", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				patch := fmt.Sprintf(`{"data":{"w%d":"%d"}}`, w, r)
				if _, err := clients[w%2].Patch(ctx, "hot", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					errs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := clients[1].Get(ctx, "hot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if v := got.Data[fmt.Sprintf("w%d", w)]; v != fmt.Sprint(rounds-1) {
			t.Errorf("key w%d = %q, want %d", w, v, rounds-1)
		}
	}
}
