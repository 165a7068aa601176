package testwait

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// DefaultInterval is the pause between two polls of Until.
const DefaultInterval = 10 * time.Millisecond

// ErrNotYet is the last answer of a boolean condition (Bool) that never
// held.
var ErrNotYet = errors.New("condition not met")

// Until polls cond every DefaultInterval until it returns nil, and fails t
// if that takes longer than timeout (or the test's context ends first),
// with what and cond's last error. It returns how long it waited.
func Until(t testing.TB, timeout time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	return UntilEvery(t, timeout, DefaultInterval, what, cond)
}

// UntilEvery is Until polling every interval.
func UntilEvery(t testing.TB, timeout, interval time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	ctx := t.Context()
	if ctx.Err() != nil {
		// Called from a t.Cleanup function: the test's context ended
		// before cleanups ran, the wait's own deadline still holds.
		ctx = context.WithoutCancel(ctx)
	}
	start := time.Now()
	if err := Poll(ctx, timeout, interval, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return time.Since(start)
}

// Poll asks cond at once and then every interval until it returns nil
// (Poll returns nil), timeout passes or ctx ends. It never pauses past the
// deadline: cond is asked a last time there. The error it returns then
// says how long it waited and wraps cond's last error.
func Poll(ctx context.Context, timeout, interval time.Duration, cond func() error) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	start := time.Now()
	deadline := start.Add(timeout)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		last := cond()
		if last == nil {
			return nil
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return fmt.Errorf("not reached within %v: %w", timeout, last)
		}
		pause := min(interval, remaining)
		if timer == nil {
			timer = time.NewTimer(pause)
		} else {
			timer.Reset(pause)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return fmt.Errorf("gave up after %v (%v): %w",
				time.Since(start).Round(time.Millisecond), context.Cause(ctx), last)
		}
	}
}

// Bool adapts a condition that reports whether it holds; its last answer
// when it never did is ErrNotYet.
func Bool(cond func() bool) func() error {
	return func() error {
		if cond() {
			return nil
		}
		return ErrNotYet
	}
}

// Reason adapts a condition that returns "" when it holds and otherwise
// says what is missing.
func Reason(cond func() string) func() error {
	return func() error {
		if why := cond(); why != "" {
			return errors.New(why)
		}
		return nil
	}
}

// Check adapts a condition that reports whether it holds and, when not,
// why.
func Check(cond func() (bool, string)) func() error {
	return func() error {
		ok, why := cond()
		switch {
		case ok:
			return nil
		case why == "":
			return ErrNotYet
		}
		return errors.New(why)
	}
}

// PollStepping is Poll for a condition that a fake clock drives: it polls
// cond every interval for a window of real time (the work the current fake
// time causes gets that long to be done), and each time a window passes
// without cond holding it calls step (which advances the fake clock) and
// polls another window, for at most rounds windows (rounds-1 steps: no
// step is taken that no poll follows). It returns nil as soon as cond
// holds, so no step happens after cond was seen to hold; otherwise an
// error saying the rounds it polled and wrapping cond's last answer, or,
// when ctx ends first, Poll's error for that.
func PollStepping(ctx context.Context, rounds int, window, interval time.Duration, step func(), cond func() error) error {
	var last error
	for round := range max(rounds, 1) {
		if round > 0 {
			step()
		}
		err := Poll(ctx, window, interval, cond)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		last = errors.Unwrap(err)
	}
	return fmt.Errorf("not reached within %d rounds of %v: %w", max(rounds, 1), window, last)
}
