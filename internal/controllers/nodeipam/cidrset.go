package nodeipam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// errNoCIDRs is the allocator's answer when every node CIDR is taken
// (Kubernetes' cidrset wording).
var errNoCIDRs = errors.New("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")

// cidrSet divides an IPv4 cluster CIDR into node CIDRs of one prefix
// length and records which are taken and by which node. It is not safe for
// concurrent use; the controller guards it with its mutex.
type cidrSet struct {
	cluster netip.Prefix
	bits    int // prefix length of a node CIDR
	max     int
	// owner maps a taken slot to its node; byNode is the inverse.
	owner  map[int]string
	byNode map[string][]int
	// next is where the downward search for a free slot starts.
	next int
}

func newCIDRSet(cluster string, maskSize int) (*cidrSet, error) {
	p, err := netip.ParsePrefix(cluster)
	if err != nil || !p.Addr().Is4() {
		return nil, fmt.Errorf("cluster CIDR %q: want an IPv4 prefix", cluster)
	}
	p = p.Masked()
	if maskSize < p.Bits() || maskSize > 30 {
		return nil, fmt.Errorf("node CIDR mask size %d: must be between the cluster CIDR's %d and 30", maskSize, p.Bits())
	}
	if maskSize-p.Bits() > 24 {
		return nil, fmt.Errorf("node CIDR mask size %d: more than 2^24 node CIDRs in %s", maskSize, p)
	}
	n := 1 << (maskSize - p.Bits())
	return &cidrSet{cluster: p, bits: maskSize, max: n, owner: map[int]string{}, byNode: map[string][]int{}, next: n - 1}, nil
}

// slot returns the index of cidr in the set, or false when cidr is not
// one of its node CIDRs.
func (s *cidrSet) slot(cidr string) (int, bool) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() != s.bits || !s.cluster.Contains(p.Addr()) {
		return 0, false
	}
	a, base := p.Masked().Addr().As4(), s.cluster.Addr().As4()
	return int((binary.BigEndian.Uint32(a[:]) - binary.BigEndian.Uint32(base[:])) >> (32 - s.bits)), true
}

func (s *cidrSet) cidr(slot int) string {
	base := s.cluster.Addr().As4()
	v := binary.BigEndian.Uint32(base[:]) + uint32(slot)<<(32-s.bits)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.PrefixFrom(netip.AddrFrom4(b), s.bits).String()
}

// occupy records that node holds cidr. It reports false when cidr is not
// in the set, or another node holds it already.
func (s *cidrSet) occupy(node, cidr string) bool {
	i, ok := s.slot(cidr)
	if !ok {
		return false
	}
	if o, taken := s.owner[i]; taken {
		return o == node
	}
	s.owner[i] = node
	s.byNode[node] = append(s.byNode[node], i)
	return true
}

// allocateNext takes a free node CIDR for node, searching downwards from
// the top of the range (the simulated nodes number theirs upwards from the
// bottom), and returns it with the number of slots it tried.
func (s *cidrSet) allocateNext(node string) (string, int, error) {
	for tries := 1; tries <= s.max; tries++ {
		i := s.next
		s.next = (s.next - 1 + s.max) % s.max
		if _, taken := s.owner[i]; !taken {
			s.owner[i] = node
			s.byNode[node] = append(s.byNode[node], i)
			return s.cidr(i), tries, nil
		}
	}
	return "", s.max, errNoCIDRs
}

// release frees every CIDR node holds and returns how many.
func (s *cidrSet) release(node string) int {
	slots := s.byNode[node]
	for _, i := range slots {
		delete(s.owner, i)
	}
	delete(s.byNode, node)
	return len(slots)
}

// releaseCIDR frees one CIDR of node (an allocation it did not use).
func (s *cidrSet) releaseCIDR(node, cidr string) {
	i, ok := s.slot(cidr)
	if !ok || s.owner[i] != node {
		return
	}
	delete(s.owner, i)
	kept := s.byNode[node][:0]
	for _, j := range s.byNode[node] {
		if j != i {
			kept = append(kept, j)
		}
	}
	if len(kept) == 0 {
		delete(s.byNode, node)
	} else {
		s.byNode[node] = kept
	}
}

func (s *cidrSet) used() int { return len(s.owner) }
