package job

import "testing"

func TestStatusWritesHoldUntilTheCacheMovesPast(t *testing.T) {
	w := newStatusWrites()
	if w.stale("ns/j", "10") {
		t.Fatal("stale before any write")
	}
	// A sync read version 10 and wrote twice: 10 → 11 → 12.
	w.wrote("ns/j", "10")
	w.wrote("ns/j", "11")
	for _, v := range []string{"10", "11", "10"} {
		if !w.stale("ns/j", v) {
			t.Fatalf("version %s (replaced by the controller's writes) not stale", v)
		}
	}
	if w.stale("ns/other", "10") {
		t.Fatal("another Job's version counted as stale")
	}
	// The informer shows the last write (or anything after it): caught up,
	// and the record is gone.
	if w.stale("ns/j", "12") {
		t.Fatal("the written version counted as stale")
	}
	if w.stale("ns/j", "10") {
		t.Fatal("record kept after the cache caught up")
	}
	w.wrote("ns/j", "12")
	w.forget("ns/j")
	if w.stale("ns/j", "12") {
		t.Fatal("record kept after forget")
	}
}
