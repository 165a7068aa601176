package informer

// ring is an unbounded FIFO: a circular buffer that doubles when full, so
// pushing never blocks and never drops. It is not safe for concurrent use;
// the listener guards it with its mutex.
type ring[E any] struct {
	// buf holds the elements; len(buf) is the capacity (0 or a power of two).
	buf []E
	// head is the index of the oldest element; n the number of elements.
	// Slots outside [head, head+n) (mod len(buf)) hold the zero E, so that
	// popped objects can be collected.
	head, n int
}

// shrinkAbove is the capacity above which an emptied ring releases its
// buffer: one burst (an initial list of many objects) must not pin its
// memory for the life of the handler.
const shrinkAbove = 1024

func (r *ring[E]) len() int { return r.n }

func (r *ring[E]) push(e E) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// pop removes and returns the oldest element; ok is false when empty.
func (r *ring[E]) pop() (e E, ok bool) {
	if r.n == 0 {
		return e, false
	}
	var zero E
	e, r.buf[r.head] = r.buf[r.head], zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if r.n == 0 {
		r.head = 0
		if len(r.buf) > shrinkAbove {
			r.buf = nil
		}
	}
	return e, true
}

// reset drops every element and releases the buffer.
func (r *ring[E]) reset() {
	r.buf, r.head, r.n = nil, 0, 0
}

func (r *ring[E]) grow() {
	size := max(16, 2*len(r.buf))
	buf := make([]E, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
