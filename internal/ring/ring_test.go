package ring

import (
	"math/rand/v2"
	"testing"
)

// TestRingAgainstASlice drives a ring with random pushes, bursts and pops
// against a slice: every element comes out once, in order, through growth,
// wrap-around and release; slots outside the elements are zero; an emptied
// buffer larger than KeepSlots is released, a smaller one kept. The walk
// must reach a large buffer and release it, or it tested too little.
func TestRingAgainstASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := Ring[int]{MinSlots: 8, KeepSlots: 64}
	var model []int
	next, maxCap, released := 1, 0, 0
	for step := range 4000 {
		if burst := rng.IntN(10) == 0; burst || rng.IntN(2) == 0 {
			n := 1
			if burst {
				n = rng.IntN(300)
			}
			for range n {
				r.Push(next)
				model = append(model, next)
				next++
			}
		} else {
			for n := rng.IntN(120); n > 0; n-- {
				before := r.Cap()
				e, ok := r.Pop()
				if ok != (len(model) > 0) {
					t.Fatalf("step %d: Pop ok=%v with %d modelled", step, ok, len(model))
				}
				if !ok {
					break
				}
				if e != model[0] {
					t.Fatalf("step %d: popped %d, want %d", step, e, model[0])
				}
				model = model[1:]
				if len(model) == 0 && before > r.KeepSlots && r.Cap() == 0 {
					released++
				}
			}
		}
		maxCap = max(maxCap, r.Cap())
		check(t, &r, len(model))
	}
	if maxCap < 8*r.KeepSlots || released == 0 {
		t.Fatalf("the walk grew the buffer to %d and released a large one %d times: too tame", maxCap, released)
	}
}

func check(t *testing.T, r *Ring[int], want int) {
	t.Helper()
	if r.Len() != want {
		t.Fatalf("Len = %d, want %d", r.Len(), want)
	}
	if l := len(r.buf); l&(l-1) != 0 || l < r.n {
		t.Fatalf("buffer of %d slots holding %d", l, r.n)
	}
	for i := r.n; i < len(r.buf); i++ {
		if s := r.buf[(r.head+i)&(len(r.buf)-1)]; s != 0 {
			t.Fatalf("slot outside the elements holds %d", s)
		}
	}
	if r.n == 0 && len(r.buf) > r.KeepSlots {
		t.Fatalf("emptied ring keeps %d slots", len(r.buf))
	}
}

// TestZeroRingDefaults: the zero Ring allocates DefaultMinSlots first,
// keeps a buffer up to DefaultKeepSlots when emptied, releases a larger
// one, and Reset empties it and releases its buffer.
func TestZeroRingDefaults(t *testing.T) {
	var r Ring[string]
	r.Push("a")
	if r.Cap() != DefaultMinSlots {
		t.Fatalf("first allocation %d, want %d", r.Cap(), DefaultMinSlots)
	}
	r.Pop()
	if r.Cap() != DefaultMinSlots {
		t.Fatalf("emptied small ring released its buffer")
	}
	for i := range DefaultKeepSlots + 1 {
		r.Push(string(rune('a' + i%26)))
	}
	for r.Len() > 0 {
		r.Pop()
	}
	if r.Cap() != 0 {
		t.Fatalf("emptied ring keeps %d slots, above %d", r.Cap(), DefaultKeepSlots)
	}
	r.Push("x")
	r.Reset()
	if _, ok := r.Pop(); ok || r.Len() != 0 || r.Cap() != 0 {
		t.Fatal("Reset ring not empty")
	}
}
