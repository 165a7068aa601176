package informer

import (
	"context"
	"time"
)

// syncPollInterval is how often WaitForCacheSync re-checks; it paces a
// wait, no logic depends on it.
const syncPollInterval = 100 * time.Millisecond

// WaitForCacheSync waits until every synced func reports true, checking at
// once and then every 100ms. It returns true when all did, false when ctx
// ended first.
func WaitForCacheSync(ctx context.Context, synced ...func() bool) bool {
	ticker := time.NewTicker(syncPollInterval)
	defer ticker.Stop()
	for {
		if allTrue(synced) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
	}
}

func allTrue(fns []func() bool) bool {
	for _, fn := range fns {
		if !fn() {
			return false
		}
	}
	return true
}
