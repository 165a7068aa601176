package informer

import "testing"

func TestRingKeepsOrderAcrossGrowthAndWrap(t *testing.T) {
	var r ring[int]
	next, want := 0, 0
	// Interleave pushes and pops so head wraps around while the buffer
	// grows, then drain.
	for round := range 200 {
		for range round % 7 * 5 {
			r.push(next)
			next++
		}
		for range round % 5 * 4 {
			got, ok := r.pop()
			if !ok {
				break
			}
			if got != want {
				t.Fatalf("popped %d, want %d", got, want)
			}
			want++
		}
	}
	for {
		got, ok := r.pop()
		if !ok {
			break
		}
		if got != want {
			t.Fatalf("popped %d, want %d", got, want)
		}
		want++
	}
	if want != next || r.len() != 0 {
		t.Fatalf("drained %d of %d, len %d", want, next, r.len())
	}

	for k := range 5000 {
		r.push(k)
	}
	for range 5000 {
		r.pop()
	}
	if r.buf != nil {
		t.Fatalf("emptied ring kept a buffer of %d", len(r.buf))
	}
	r.push(1)
	r.reset()
	if _, ok := r.pop(); ok || r.len() != 0 {
		t.Fatal("reset ring not empty")
	}
}
