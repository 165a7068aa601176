package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Range is a finite set of values addressed by index.
type Range interface {
	// Size is the number of values.
	Size() int
	// Value returns the value at index i (0 <= i < Size()).
	Value(i int) string
	// Contains reports whether v is in the range.
	Contains(v string) bool
}

// ErrFull is returned when every value of the range is taken.
var ErrFull = errors.New("allocator: range is full")

// ErrOutOfRange is returned when a requested value is not in the range.
var ErrOutOfRange = errors.New("allocator: value is not in the range")

// ErrTaken is returned when a requested value is already allocated.
var ErrTaken = errors.New("allocator: value is already allocated")

// Allocator claims values of one range in a store.
type Allocator struct {
	rng    Range
	kv     storage.Store
	prefix string
	// reserved values are never handed out by Allocate (e.g. the first IP,
	// kept for the kubernetes service).
	reserved map[string]bool
}

// New returns an allocator of rng whose claims live under prefix (ending
// in "/").
func New(kv storage.Store, prefix string, rng Range, reserved ...string) *Allocator {
	r := map[string]bool{}
	for _, v := range reserved {
		r[v] = true
	}
	return &Allocator{rng: rng, kv: kv, prefix: prefix, reserved: r}
}

// Allocate claims a free value, chosen at random and then probing
// linearly, and records owner (e.g. "default/web") in the claim.
func (a *Allocator) Allocate(ctx context.Context, owner string) (string, error) {
	n := a.rng.Size()
	start := rand.IntN(n)
	for i := range n {
		v := a.rng.Value((start + i) % n)
		if a.reserved[v] {
			continue
		}
		_, err := a.kv.Create(ctx, a.prefix+v, []byte(owner))
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, storage.ErrKeyExists) {
			return "", fmt.Errorf("claim %s: %w", v, err)
		}
	}
	return "", ErrFull
}

// Claim takes a specific value.
func (a *Allocator) Claim(ctx context.Context, v, owner string) error {
	if !a.rng.Contains(v) {
		return ErrOutOfRange
	}
	_, err := a.kv.Create(ctx, a.prefix+v, []byte(owner))
	if errors.Is(err, storage.ErrKeyExists) {
		return ErrTaken
	}
	if err != nil {
		return fmt.Errorf("claim %s: %w", v, err)
	}
	return nil
}

// Release frees a value; releasing a free value is not an error.
func (a *Allocator) Release(ctx context.Context, v string) error {
	_, _, err := a.kv.Delete(ctx, a.prefix+v, 0)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("release %s: %w", v, err)
	}
	return nil
}

// CIDR is an IPv4 range minus its network and broadcast addresses.
type CIDR struct{ p netip.Prefix }

// ParseCIDR parses an IPv4 CIDR such as "10.96.0.0/12".
func ParseCIDR(s string) (CIDR, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return CIDR{}, fmt.Errorf("allocator: %q is not an IPv4 CIDR of at least 4 addresses", s)
	}
	return CIDR{p.Masked()}, nil
}

func (c CIDR) Size() int { return 1<<(32-c.p.Bits()) - 2 }

func (c CIDR) Value(i int) string {
	a := c.p.Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n += uint32(i) + 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
}

func (c CIDR) Contains(v string) bool {
	a, err := netip.ParseAddr(v)
	return err == nil && c.p.Contains(a) && a != c.p.Addr() && v != c.Value(c.Size())
}

// Ports is an inclusive port range such as 30000-32767.
type Ports struct{ Min, Max int }

func (p Ports) Size() int          { return p.Max - p.Min + 1 }
func (p Ports) Value(i int) string { return strconv.Itoa(p.Min + i) }
func (p Ports) Contains(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n >= p.Min && n <= p.Max
}
