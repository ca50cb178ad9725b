package ipam

import (
	"fmt"
	"math/big"
	"net/netip"
	"strings"

	ipamv1alpha2 "github.com/slipway-dev/slipway/api/ipam/v1alpha2"
)

// addrRange is an inclusive range of addresses of one family.
type addrRange struct{ first, last netip.Addr }

func (r addrRange) contains(a netip.Addr) bool {
	return r.first.Compare(a) <= 0 && a.Compare(r.last) <= 0
}

// size is the number of addresses in the range.
func (r addrRange) size() *big.Int {
	f, l := r.first.As16(), r.last.As16()
	n := new(big.Int).Sub(new(big.Int).SetBytes(l[:]), new(big.Int).SetBytes(f[:]))
	return n.Add(n, big.NewInt(1))
}

// parseRanges reads addresses in the pool's forms: an address, first-last, or a CIDR.
func parseRanges(field string, values []string) ([]addrRange, error) {
	var out []addrRange
	for i, v := range values {
		r, err := parseRange(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s[%d] %q: %w: write an address, a range first-last or a CIDR", field, i, v, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRange(v string) (addrRange, error) {
	if first, last, ok := strings.Cut(v, "-"); ok {
		f, err := netip.ParseAddr(strings.TrimSpace(first))
		if err != nil {
			return addrRange{}, err
		}
		l, err := netip.ParseAddr(strings.TrimSpace(last))
		if err != nil {
			return addrRange{}, err
		}
		if f.Is4() != l.Is4() || l.Less(f) {
			return addrRange{}, fmt.Errorf("the range's end is before its start or of another family")
		}
		return addrRange{f, l}, nil
	}
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return addrRange{}, err
		}
		return addrRange{p.Masked().Addr(), lastOf(p)}, nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return addrRange{}, err
	}
	return addrRange{a, a}, nil
}

// lastOf returns the last address of a prefix.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		bits := p.Bits() - i*8
		switch {
		case bits >= 8:
		case bits <= 0:
			b[i] = 0xff
		default:
			b[i] |= 0xff >> bits
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// pool is a pool's spec, parsed.
type pool struct {
	ranges, excluded []addrRange
	prefix           int
	gateway          netip.Addr
	allocateReserved bool
}

// parsePool checks a pool's spec and reads it.
func parsePool(spec ipamv1alpha2.InClusterIPPoolSpec) (*pool, error) {
	p := &pool{prefix: spec.Prefix, allocateReserved: spec.AllocateReservedIPAddresses}
	var err error
	if p.ranges, err = parseRanges("spec.addresses", spec.Addresses); err != nil {
		return nil, err
	}
	if len(p.ranges) == 0 {
		return nil, fmt.Errorf("spec.addresses is empty: list the addresses to assign")
	}
	if p.excluded, err = parseRanges("spec.excludedAddresses", spec.ExcludedAddresses); err != nil {
		return nil, err
	}
	family := p.ranges[0].first.Is4()
	for i, r := range p.ranges {
		if r.first.Is4() != family {
			return nil, fmt.Errorf("spec.addresses[%d] %q: a pool holds addresses of one family", i, spec.Addresses[i])
		}
		if !r.first.Is4() || spec.Prefix <= 32 {
			continue
		}
		return nil, fmt.Errorf("spec.prefix %d: an IPv4 pool's prefix is at most 32", spec.Prefix)
	}
	if spec.Gateway != "" {
		if p.gateway, err = netip.ParseAddr(spec.Gateway); err != nil {
			return nil, fmt.Errorf("spec.gateway %q: %w", spec.Gateway, err)
		}
		if p.gateway.Is4() != family {
			return nil, fmt.Errorf("spec.gateway %q: the gateway is of another family than the addresses", spec.Gateway)
		}
	}
	return p, nil
}

// assignable says whether an address of the ranges may be assigned: not excluded, not the
// gateway, and not the network's reserved addresses unless they are allowed.
func (p *pool) assignable(a netip.Addr) bool {
	if a == p.gateway {
		return false
	}
	for _, r := range p.excluded {
		if r.contains(a) {
			return false
		}
	}
	if !p.allocateReserved {
		network := netip.PrefixFrom(a, p.prefix).Masked()
		if a == network.Addr() || (a.Is4() && a == lastOf(network)) {
			return false
		}
	}
	return true
}

// contains says whether the pool's addresses hold a.
func (p *pool) contains(a netip.Addr) bool {
	for _, r := range p.ranges {
		if r.contains(a) {
			return true
		}
	}
	return false
}

// countLimit bounds the addresses counted one by one; a larger pool's total is its size.
const countLimit = 1 << 16

// total counts the addresses the pool can assign.
func (p *pool) total() int {
	n := 0
	for _, r := range p.ranges {
		if r.size().Cmp(big.NewInt(countLimit)) > 0 {
			if s := r.size(); s.IsInt64() && s.Int64() < int64(^uint(0)>>2) {
				n += int(s.Int64())
			} else {
				return int(^uint(0) >> 1)
			}
			continue
		}
		for a := r.first; a.IsValid() && a.Compare(r.last) <= 0; a = a.Next() {
			if p.assignable(a) {
				n++
			}
		}
	}
	return n
}

// next returns the lowest assignable address that is not in use.
func (p *pool) next(used map[netip.Addr]bool) (netip.Addr, bool) {
	for _, r := range p.ranges {
		for a := r.first; a.IsValid() && a.Compare(r.last) <= 0; a = a.Next() {
			if !used[a] && p.assignable(a) {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}
