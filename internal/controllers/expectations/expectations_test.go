package expectations

import (
	"fmt"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestCountsAndSatisfaction(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	e := New(clk)
	if !e.SatisfiedExpectations("ns/rs") {
		t.Fatal("no record must be satisfied")
	}
	e.ExpectCreations("ns/rs", 2)
	if e.SatisfiedExpectations("ns/rs") {
		t.Fatal("2 creations outstanding but satisfied")
	}
	e.CreationObserved("ns/rs")
	if e.SatisfiedExpectations("ns/rs") {
		t.Fatal("1 creation outstanding but satisfied")
	}
	e.RaiseExpectations("ns/rs", 0, 1)
	e.CreationObserved("ns/rs")
	if add, del, _ := e.Get("ns/rs"); add != 0 || del != 1 || e.SatisfiedExpectations("ns/rs") {
		t.Fatalf("add=%d del=%d", add, del)
	}
	e.LowerExpectations("ns/rs", 0, 1)
	if !e.SatisfiedExpectations("ns/rs") {
		t.Fatal("all observed but not satisfied")
	}
	// Extra observations go negative and stay satisfied.
	e.DeletionObserved("ns/rs")
	if add, del, _ := e.Get("ns/rs"); add != 0 || del != -1 || !e.SatisfiedExpectations("ns/rs") {
		t.Fatalf("add=%d del=%d", add, del)
	}
	// Observations for a key without a record do not create one.
	e.CreationObserved("other")
	if _, _, ok := e.Get("other"); ok {
		t.Fatal("observation created a record")
	}
	e.DeleteExpectations("ns/rs")
	if _, _, ok := e.Get("ns/rs"); ok {
		t.Fatal("record survived DeleteExpectations")
	}
}

func TestExpiry(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	e := New(clk)
	e.ExpectDeletions("k", 3)
	clk.SetTime(clk.Now().Add(TTL))
	if e.SatisfiedExpectations("k") {
		t.Fatal("satisfied at exactly TTL")
	}
	// Raise keeps the original timestamp.
	e.RaiseExpectations("k", 1, 0)
	clk.SetTime(clk.Now().Add(time.Second))
	if !e.SatisfiedExpectations("k") {
		t.Fatal("not satisfied after TTL")
	}
	// Set restarts the TTL.
	e.ExpectCreations("k", 1)
	if e.SatisfiedExpectations("k") {
		t.Fatal("fresh record satisfied")
	}
}

func TestUIDTracking(t *testing.T) {
	u := NewUIDTracking(clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	u.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
	u.DeletionObserved("rs", "ns/zzz") // not ours
	u.DeletionObserved("rs", "ns/a")
	u.DeletionObserved("rs", "ns/a") // twice: counted once
	if _, del, _ := u.Get("rs"); del != 1 || u.SatisfiedExpectations("rs") {
		t.Fatalf("del=%d, pending %v", del, u.PendingDeletions("rs"))
	}
	if p := u.PendingDeletions("rs"); len(p) != 1 || p[0] != "ns/b" {
		t.Fatalf("pending %v", p)
	}
	u.DeletionObserved("rs", "ns/b")
	if !u.SatisfiedExpectations("rs") {
		t.Fatal("not satisfied after all deletions observed")
	}
	u.ExpectDeletions("rs", []string{"ns/c"})
	u.DeleteExpectations("rs")
	if _, _, ok := u.Get("rs"); ok || len(u.PendingDeletions("rs")) != 0 {
		t.Fatal("DeleteExpectations left state")
	}
}

// TestConcurrent lowers one record from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	u := NewUIDTracking(nil)
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/p%d", i)
	}
	u.ExpectDeletions("rs", keys)
	u.RaiseExpectations("rs", 200, 0)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.DeletionObserved("rs", keys[i])
			u.CreationObserved("rs")
			_ = u.SatisfiedExpectations("rs")
		}()
	}
	wg.Wait()
	if add, del, _ := u.Get("rs"); add != 0 || del != 0 {
		t.Fatalf("add=%d del=%d after concurrent observations", add, del)
	}
}
