package leaderelection

import "sync"

// notifier delivers OnNewLeader calls in order from one goroutine, so a
// slow callback never stalls the election loop. Identities posted while a
// call runs are coalesced: only the latest is delivered next.
type notifier struct {
	fn   func(string)
	kick chan struct{} // capacity 1: "pending has a value"

	mu      sync.Mutex
	pending *string // latest identity not yet delivered; nil when none
}

func newNotifier(fn func(string)) *notifier {
	return &notifier{fn: fn, kick: make(chan struct{}, 1)}
}

// post queues id for delivery, replacing any undelivered one.
func (n *notifier) post(id string) {
	n.mu.Lock()
	n.pending = &id
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// take returns and clears the pending identity.
func (n *notifier) take() (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pending == nil {
		return "", false
	}
	id := *n.pending
	n.pending = nil
	return id, true
}

// start runs the delivery goroutine; the returned stop delivers what is
// still pending, then waits for the goroutine to end.
func (n *notifier) start() (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-n.kick:
				if id, ok := n.take(); ok {
					n.fn(id)
				}
			case <-quit:
				if id, ok := n.take(); ok {
					n.fn(id)
				}
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
