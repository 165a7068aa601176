package nodeagent

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
)

// maxNodes is how many nodes fit in the pod network 10.128.0.0/9 with a /24
// each.
const maxNodes = 1 << 15

// The pod CIDR of node i is the i-th /24 of 10.128.0.0/9.
var (
	podNetBase  = binary.BigEndian.Uint32(net.IPv4(10, 128, 0, 0).To4())
	podCIDRBits = 24
)

func uint32IP(v uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// podCIDR returns the pod CIDR of node index i.
func podCIDR(i int) string {
	return fmt.Sprintf("%s/%d", uint32IP(podNetBase+uint32(i)<<8), podCIDRBits)
}

// ipam hands out pod IPs of one node's pod CIDR: offsets 2 … last-1 of the
// range (.0 is the network, .1 the bridge, the last the broadcast). It is
// not safe for concurrent use; the agent guards it with its mutex.
type ipam struct {
	// base is the CIDR's first address; size the number of usable
	// offsets, at most 256.
	base uint32
	size int
	// used maps an offset to the pod holding it; byPod is its inverse.
	// Invariant: the two maps mirror each other.
	used  map[int]types.UID
	byPod map[types.UID]int
	// next is where the search for a free offset starts (round robin, so
	// an address just freed is not reused at once).
	next int
}

func newIPAM(cidr string) (*ipam, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return nil, fmt.Errorf("pod CIDR %q: want an IPv4 prefix", cidr)
	}
	p = p.Masked()
	size := 1 << (32 - p.Bits())
	if size > 256 {
		size = 256
	}
	if size < 4 {
		return nil, fmt.Errorf("pod CIDR %q is too small", cidr)
	}
	b := p.Addr().As4()
	return &ipam{base: binary.BigEndian.Uint32(b[:]), size: size, used: map[int]types.UID{},
		byPod: map[types.UID]int{}, next: 2}, nil
}

// allocate returns the pod's address, reserving a free one if it has none.
func (a *ipam) allocate(uid types.UID) (string, error) {
	if off, ok := a.byPod[uid]; ok {
		return uint32IP(a.base + uint32(off)).String(), nil
	}
	span := a.size - 3
	for n := range span {
		off := 2 + (a.next-2+n)%span
		if _, taken := a.used[off]; !taken {
			a.used[off], a.byPod[uid] = uid, off
			a.next = off + 1
			return uint32IP(a.base + uint32(off)).String(), nil
		}
	}
	return "", fmt.Errorf("no free pod IP in %d addresses", span)
}

// reserve records that uid holds ip (an address from before a restart). It
// reports false when ip is outside the range or held by another pod.
func (a *ipam) reserve(uid types.UID, ip string) bool {
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.Is4() {
		return false
	}
	b := addr.As4()
	off := int(binary.BigEndian.Uint32(b[:])) - int(a.base)
	if off < 2 || off >= a.size-1 {
		return false
	}
	if holder, taken := a.used[off]; taken {
		return holder == uid
	}
	a.release(uid)
	a.used[off], a.byPod[uid] = uid, off
	return true
}

// release frees the pod's address, if any.
func (a *ipam) release(uid types.UID) {
	if off, ok := a.byPod[uid]; ok {
		delete(a.byPod, uid)
		delete(a.used, off)
	}
}
