package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/utils/clock"
)

// Defaults, as client-go's leader election uses them.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// JitterFactor spreads acquire attempts: each wait is RetryPeriod plus a
	// random extra of up to JitterFactor*RetryPeriod. RenewDeadline must
	// exceed JitterFactor*RetryPeriod so a leader gets more than one renewal
	// attempt per deadline.
	JitterFactor = 1.2
)

// Config configures one candidate. Zero durations select the defaults.
type Config struct {
	// Lock is the Lease the candidates compete for. Required.
	Lock *LeaseLock
	// LeaseDuration is how long a non-leader waits, after last seeing the
	// lease change, before it takes the lease over. It is written to the
	// Lease (rounded up to whole seconds) and it is the holder's promise.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew after its
	// last successful renewal before it stops leading. It must be shorter
	// than LeaseDuration: that gap is what keeps an old leader from still
	// acting when another candidate takes over.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts to acquire or renew.
	RetryPeriod time.Duration
	// ReleaseOnCancel makes Run, when its context is cancelled while
	// leading, wait for OnStartedLeading to return and then write the lease
	// free (holder "", duration 1s) so another candidate takes over at once.
	ReleaseOnCancel bool
	// Callbacks are the user's hooks. OnStartedLeading and OnStoppedLeading
	// are required.
	Callbacks Callbacks
	// Clock times everything; nil means the real clock.
	Clock clock.WithTicker
	// Logger receives transitions and errors; nil means slog.Default().
	Logger *slog.Logger
}

// Callbacks are invoked by Run.
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine once the lease is held. Its
	// context is cancelled when leadership ends; it must then return
	// promptly, since Run waits for it before returning (and, with
	// ReleaseOnCancel, before releasing the lease).
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once, from Run's goroutine, after leading
	// ended (the leader context is already cancelled). It is not called if
	// this candidate never led.
	OnStoppedLeading func()
	// OnNewLeader, optional, is called with each new holder identity seen
	// ("" when the lease is released), in order, from a goroutine owned by
	// Run; a slow callback delays only later notifications, which are
	// coalesced to the latest.
	OnNewLeader func(identity string)
}

// withDefaults returns a copy of c with zero values replaced by defaults.
func (c Config) withDefaults() Config {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate checks c after defaulting: LeaseDuration > RenewDeadline >
// JitterFactor*RetryPeriod, all positive, a complete lock and the required
// callbacks. It returns every problem found, joined.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.LeaseDuration < 0 || c.RenewDeadline < 0 || c.RetryPeriod < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, fmt.Errorf("leaseDuration %v must be greater than renewDeadline %v", c.LeaseDuration, c.RenewDeadline))
	}
	if min := time.Duration(JitterFactor * float64(c.RetryPeriod)); c.RenewDeadline <= min {
		errs = append(errs, fmt.Errorf("renewDeadline %v must be greater than retryPeriod*%v = %v", c.RenewDeadline, JitterFactor, min))
	}
	switch {
	case c.Lock == nil:
		errs = append(errs, errors.New("lock is required"))
	default:
		if c.Lock.Identity == "" {
			errs = append(errs, errors.New("lock identity is required"))
		}
		if c.Lock.Name == "" || c.Lock.Namespace == "" {
			errs = append(errs, errors.New("lock namespace and name are required"))
		}
		if c.Lock.Client == nil {
			errs = append(errs, errors.New("lock client is required"))
		}
	}
	if c.Callbacks.OnStartedLeading == nil {
		errs = append(errs, errors.New("OnStartedLeading callback is required"))
	}
	if c.Callbacks.OnStoppedLeading == nil {
		errs = append(errs, errors.New("OnStoppedLeading callback is required"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid leader election config: %w", errors.Join(errs...))
	}
	return nil
}
