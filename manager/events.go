package manager

import (
	"context"
	"fmt"
	"time"

	"github.com/setpoint-dev/setpoint/record"
)

// eventFlushTimeout bounds the flush of queued events at shutdown.
const eventFlushTimeout = 5 * time.Second

// GetEventRecorderFor returns a recorder of Events whose source component
// is name. All recorders share one broadcaster (package record: dedup,
// aggregation, spam limits), created on first use and shut down by Start
// on its way out, after the controllers stopped, so their last events are
// written. Record events only from a manager that is (or will be) started:
// Start owns the broadcaster's goroutine.
func (m *Manager) GetEventRecorderFor(name string) (record.Recorder, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broadcaster == nil {
		b, err := record.NewBroadcaster(record.Options{Sink: record.NewRESTSink(m.client), Scheme: m.scheme,
			Clock: m.opts.Clock, Logger: m.log})
		if err != nil {
			return nil, fmt.Errorf("manager: event broadcaster: %w", err)
		}
		m.broadcaster = b
	}
	return m.broadcaster.NewComponentRecorder(name), nil
}

// stopEvents writes the queued events and stops the broadcasters, the
// identities' (EventRecorderFor) too.
func (m *Manager) stopEvents() {
	m.mu.Lock()
	b := m.broadcaster
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), eventFlushTimeout)
	defer cancel()
	m.stopIdentities(ctx)
	if b == nil {
		return
	}
	if err := b.Shutdown(ctx); err != nil {
		m.log.Error("event broadcaster shutdown", "err", err)
	}
}
