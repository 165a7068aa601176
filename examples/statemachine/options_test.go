package statemachine

import (
	"testing"
	"time"
)

// TestRetryDelay: the wait before retry n doubles from RetryBaseDelay and
// stops at RetryMaxDelay.
func TestRetryDelay(t *testing.T) {
	o := Options{RetryBaseDelay: time.Second, RetryMaxDelay: 5 * time.Second}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int32]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 40: 5 * time.Second} {
		if got := o.retryDelay(n); got != want {
			t.Errorf("retryDelay(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestOptionsRefused: negative durations and a max delay below the base
// are errors naming the problem.
func TestOptionsRefused(t *testing.T) {
	for _, o := range []Options{{ProvisionTime: -time.Second}, {RetryBaseDelay: time.Minute, RetryMaxDelay: time.Second}} {
		if err := o.setDefaults(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	o := Options{}
	if err := o.setDefaults(); err != nil || o.ProvisionTime != DefaultProvisionTime || o.RetryMaxDelay != DefaultRetryMaxDelay || o.Name != DefaultName {
		t.Errorf("defaults: %+v, %v", o, err)
	}
}
