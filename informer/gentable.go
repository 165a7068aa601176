package informer

// genTable is a map bounded to two generations of max entries each. A put
// into a full current generation first retires it: the previous one is
// dropped and the current one becomes the previous one. A hit in the
// previous generation moves the entry into the current one, so entries in
// use survive and the rest are forgotten after two retirements.
//
// It is not safe for concurrent use; the compactor guards it.
type genTable[K comparable, V any] struct {
	cur, prev map[K]V
	max       int
}

func newGenTable[K comparable, V any](max int) genTable[K, V] {
	return genTable[K, V]{cur: map[K]V{}, max: max}
}

func (g *genTable[K, V]) get(k K) (V, bool) {
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.prev[k]
	if ok {
		g.put(k, v)
	}
	return v, ok
}

func (g *genTable[K, V]) put(k K, v V) {
	if len(g.cur) >= g.max {
		g.prev, g.cur = g.cur, make(map[K]V, g.max/4)
	}
	g.cur[k] = v
}

// len is the number of entries in both generations (duplicates counted
// twice).
func (g *genTable[K, V]) len() int { return len(g.cur) + len(g.prev) }
