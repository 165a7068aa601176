// Package ring is an unbounded FIFO on a circular buffer: Push never
// blocks and never drops, the buffer doubles when full and is released
// when a reader empties one that a burst made large, so a queue's memory
// follows what waits in it. It is not safe for concurrent use; its owner
// guards it (the informers' listeners, the watch cache's watchers).
package ring

// Ring is a FIFO of E; the zero Ring is empty and ready, with the default
// sizes.
//
// Invariants: buf is nil or has a power-of-two length (the capacity); the
// elements are buf[head], buf[head+1], … modulo len(buf), n of them; the
// slots outside them hold the zero E, so a popped element can be
// collected.
type Ring[E any] struct {
	buf     []E
	head, n int
	// MinSlots is the capacity of the first allocation (DefaultMinSlots
	// when 0); it must be a power of two.
	MinSlots int
	// KeepSlots is the largest capacity an emptied ring keeps
	// (DefaultKeepSlots when 0): a larger buffer, grown by a burst, is
	// released so that it does not stay pinned.
	KeepSlots int
}

// Defaults of the zero Ring's sizes.
const (
	DefaultMinSlots  = 16
	DefaultKeepSlots = 1024
)

// Len is the number of elements waiting.
func (r *Ring[E]) Len() int { return r.n }

// Cap is the capacity of the buffer held now (0 when none).
func (r *Ring[E]) Cap() int { return len(r.buf) }

// Push appends e, growing the buffer when it is full.
func (r *Ring[E]) Push(e E) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// Pop removes and returns the oldest element; ok is false when empty.
func (r *Ring[E]) Pop() (e E, ok bool) {
	if r.n == 0 {
		return e, false
	}
	var zero E
	e, r.buf[r.head] = r.buf[r.head], zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if r.n == 0 {
		r.head = 0
		if len(r.buf) > r.keepSlots() {
			r.buf = nil
		}
	}
	return e, true
}

// Reset drops every element and releases the buffer.
func (r *Ring[E]) Reset() {
	r.buf, r.head, r.n = nil, 0, 0
}

func (r *Ring[E]) grow() {
	minSlots := r.MinSlots
	if minSlots <= 0 {
		minSlots = DefaultMinSlots
	}
	buf := make([]E, max(minSlots, 2*len(r.buf)))
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}

func (r *Ring[E]) keepSlots() int {
	if r.KeepSlots <= 0 {
		return DefaultKeepSlots
	}
	return r.KeepSlots
}
