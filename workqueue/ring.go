package workqueue

// ring is a growable FIFO on a circular buffer: pushes and pops do not
// allocate once it has grown to the working size.
type ring[E any] struct {
	buf  []E // len(buf) is zero or a power of two
	head int // index of the first element
	n    int // number of elements
}

func (r *ring[E]) len() int { return r.n }

func (r *ring[E]) push(e E) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// pop removes the first element. The ring must not be empty.
func (r *ring[E]) pop() E {
	var zero E
	e := r.buf[r.head]
	r.buf[r.head] = zero // let the GC reclaim what e references
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return e
}

func (r *ring[E]) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 16
	}
	buf := make([]E, size)
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
