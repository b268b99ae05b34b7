package perftest

import (
	"fmt"
	"math/rand"
)

// PermutationParams: every host sends one flow to one partner.
type PermutationParams struct {
	Hosts []Endpoint
	// Bytes is every flow's size; when 0, each flow's size is drawn from
	// CDF instead.
	Bytes    int64
	CDF      *CDF
	Seed     int64
	MsgSize  int64
	QPs      int
	Tool     string
	BasePort int
	Group    string
}

// Permutation builds permutation traffic: each host sends exactly one flow
// and receives exactly one, all at offset 0, to a partner given by a
// uniformly random derangement (no host sends to itself), seeded. It is
// the classic stress of a fabric's load balancing: every host's link is
// busy in both directions and only the core decides how well they share.
func Permutation(p PermutationParams) ([]Flow, error) {
	n := len(p.Hosts)
	if n < 2 {
		return nil, fmt.Errorf("permutation: needs at least 2 hosts, got %d", n)
	}
	if p.Bytes <= 0 && p.CDF == nil {
		return nil, fmt.Errorf("permutation: needs a flow size or a CDF")
	}
	msg := p.MsgSize
	if msg <= 0 {
		msg = 64 << 10
	}
	if err := checkCommon(p.Tool, max(p.Bytes, 1), msg); err != nil {
		return nil, fmt.Errorf("permutation: %w", err)
	}
	ports, err := newPorts(p.BasePort)
	if err != nil {
		return nil, fmt.Errorf("permutation: %w", err)
	}
	rng := rand.New(rand.NewSource(p.Seed))
	d := derangement(n, rng)
	flows := make([]Flow, n)
	for i, j := range d {
		size, m := p.Bytes, msg
		if size <= 0 {
			size = p.CDF.Sample(rng.Float64())
			m = messageFor(size, msg)
		}
		flows[i] = flow(i, p.Hosts[i], p.Hosts[j], p.Tool, size, m, p.QPs, ports.of(p.Hosts[j].Host), p.Group, 0)
	}
	return flows, nil
}
