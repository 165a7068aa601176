package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/handler"
)

// Source feeds a controller's queue, typically from an informer (see
// Informer).
type Source interface {
	// Start begins delivering requests into q. The controller calls it
	// once, from Start, before it consults HasSynced, with its own name
	// (for the source's logs and metrics); delivery stops when ctx ends.
	Start(ctx context.Context, controller string, q handler.Queue) error
	// HasSynced reports whether every request of the initial list has
	// been delivered.
	HasSynced() bool
	// LastError is why the source is not (yet) synced: its latest list or
	// watch error, or nil.
	LastError() error
	// String names the source's resource, e.g. "apps/v1 deployments".
	String() string
}

// SyncPollInterval is how often WaitForSync checks its sources.
const SyncPollInterval = 10 * time.Millisecond

// WaitForSync waits until every source has synced. It fails when ctx ends
// or timeout passes on clk first; the timeout error names each unsynced
// source with its last error, for example:
//
//	timed out waiting for cache of apps/v1 deployments to sync: deployments.apps is forbidden: ...
//
// The sources are polled every SyncPollInterval of real time whatever clk
// is: a fake clock decides only when the wait times out, so a controller
// driven by a fake clock still starts as soon as its caches sync.
func WaitForSync(ctx context.Context, clk clock.WithTicker, timeout time.Duration, sources ...Source) error {
	deadline := clk.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(SyncPollInterval)
	defer tick.Stop()
	for {
		pending := unsynced(sources)
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C():
			return syncError("timed out waiting for cache of", pending)
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ctx.Err(), syncError("stopped while waiting for cache of", pending))
		}
	}
}

func unsynced(sources []Source) []Source {
	var out []Source
	for _, s := range sources {
		if !s.HasSynced() {
			out = append(out, s)
		}
	}
	return out
}

// syncError describes each source that did not sync. The last errors are
// wrapped, so apierrors.IsForbidden and IsNotFound see through it.
func syncError(prefix string, pending []Source) error {
	var errs []error
	for _, s := range pending {
		if last := s.LastError(); last != nil {
			errs = append(errs, fmt.Errorf("%s %s to sync: %w", prefix, s, last))
		} else {
			errs = append(errs, fmt.Errorf("%s %s to sync", prefix, s))
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &joined{errs: errs}
}

// joined is errors.Join with "; " between the messages, so that a
// multi-source failure reads as one line in logs.
type joined struct{ errs []error }

func (j *joined) Error() string {
	msgs := make([]string, len(j.errs))
	for i, e := range j.errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (j *joined) Unwrap() []error { return j.errs }
