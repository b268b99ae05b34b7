package perftest

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"time"
)

// Pairings of a workload's flows.
const (
	// PairRandom sends every flow to a host chosen at random (uniformly
	// among the others, or by rack when IntraRack is set), as the papers'
	// generators do.
	PairRandom = "random"
	// PairPermutation sends all of a host's flows to one partner; the
	// partners are a random derangement (see Permutation).
	PairPermutation = "permutation"
)

// DefaultLoadTolerance is the relative difference between the requested
// load and the load a generated workload offers that scenarios accept
// (PoissonParams.Tolerance).
const DefaultLoadTolerance = 0.02

// PoissonParams generate workload traffic.
type PoissonParams struct {
	Hosts    []Endpoint
	CDF      *CDF
	Load     float64 // fraction of each host's link rate
	LinkGbps float64
	Duration time.Duration // arrivals within [0, Duration)
	Seed     int64
	// Pairing is PairRandom (default) or PairPermutation.
	Pairing string
	// Racks maps each host to its rack (the switch its RNIC is cabled
	// to). With IntraRack set, that fraction of the flows goes to another
	// host of the sender's rack and the rest to hosts of other racks
	// (FLB's 1:3 intra:inter-rack mix is 0.25); unset, destinations are
	// uniform over all other hosts, racks ignored.
	Racks     map[string]string
	IntraRack *float64
	// Tolerance, when > 0, conditions the draw on its load: |offered -
	// Load| / Load must not exceed it (scenarios use DefaultLoadTolerance).
	// 0 keeps the first draw, as the papers' generators do; its offered
	// load then varies with the draw. MaxAttempts bounds the windows drawn
	// to meet the tolerance (default 10000).
	Tolerance   float64
	MaxAttempts int
	MsgSize     int64 // perftest message size for flows (default 4096)
	Tool        string
	BasePort    int
	Group       string
	MaxFlows    int // safety bound (default 1,000,000)
}

// Poisson generates flows as the papers' generators do: every host starts
// flows as a Poisson process with mean inter-arrival S*8/(R*L) (S the mean
// size, R the link rate, L the load), with a size drawn from the CDF and a
// destination chosen by the pairing. Deterministic for a seed.
//
// With a Tolerance the draw is conditioned on the load it offers. With a
// heavy-tailed CDF the bytes of a short window vary widely (WebSearch, 8
// hosts, 10 ms: about ±20 % standard deviation), so one draw would not
// offer the load it claims. Poisson then draws whole windows one after the
// other from the seeded source and keeps the first whose bytes offer the
// requested load within the tolerance: a sample of the same process
// conditioned on its total, with no size truncated or rescaled and
// arrivals still Poisson given their number. A window too short for the
// CDF meets the tolerance too rarely, and the error says to lengthen it.
func Poisson(p PoissonParams) ([]Flow, error) {
	if len(p.Hosts) < 2 || p.CDF == nil || p.Load <= 0 || p.LinkGbps <= 0 || p.Duration <= 0 {
		return nil, fmt.Errorf("workload: need >= 2 hosts, a CDF, load > 0, link rate > 0 and a duration")
	}
	p.defaults()
	rng := rand.New(rand.NewSource(p.Seed))
	dest, err := newPairer(p, rng)
	if err != nil {
		return nil, err
	}
	meanGap := p.CDF.Mean() * 8 / (p.LinkGbps * p.Load)                           // ns
	want := p.Load * float64(len(p.Hosts)) * p.LinkGbps / 8 * float64(p.Duration) // bytes
	best := math.Inf(1)
	for attempt := 0; attempt < p.MaxAttempts; attempt++ {
		all, bytes, err := p.window(rng, meanGap, dest)
		if err != nil {
			return nil, err
		}
		miss := math.Abs(bytes-want) / want
		if p.Tolerance == 0 || miss <= p.Tolerance {
			return p.flows(all)
		}
		best = min(best, miss)
	}
	return nil, fmt.Errorf("workload: none of %d draws of a %v window offered load %.2f within %.0f%% (closest missed by %.1f%%); "+
		"the window holds only about %.0f flows of mean size %.0f B per host: lengthen the duration",
		p.MaxAttempts, p.Duration, p.Load, p.Tolerance*100, best*100, float64(p.Duration)/meanGap, p.CDF.Mean())
}

func (p *PoissonParams) defaults() {
	if p.MsgSize <= 0 {
		p.MsgSize = 4096
	}
	if p.Tool == "" {
		p.Tool = "ib_write_bw"
	}
	if p.MaxFlows <= 0 {
		p.MaxFlows = 1_000_000
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 10000
	}
}

type arrival struct {
	t        float64
	src, dst int
	size     int64
}

// window draws one arrival window and returns its flows and their bytes.
func (p *PoissonParams) window(rng *rand.Rand, meanGap float64, dest func(src int) int) ([]arrival, float64, error) {
	var all []arrival
	var bytes float64
	for src := range p.Hosts {
		for t := rng.ExpFloat64() * meanGap; t < float64(p.Duration); t += rng.ExpFloat64() * meanGap {
			a := arrival{t, src, dest(src), p.CDF.Sample(rng.Float64())}
			all, bytes = append(all, a), bytes+float64(a.size)
			if len(all) > p.MaxFlows {
				return nil, 0, fmt.Errorf("workload: more than %d flows; shorten the duration", p.MaxFlows)
			}
		}
	}
	return all, bytes, nil
}

func (p *PoissonParams) flows(all []arrival) ([]Flow, error) {
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	ports, err := newPorts(p.BasePort)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	flows := make([]Flow, len(all))
	for i, a := range all {
		dst := p.Hosts[a.dst]
		f := flow(i, p.Hosts[a.src], dst, p.Tool, a.size, messageFor(a.size, p.MsgSize), 1, ports.of(dst.Host), p.Group, 0)
		f.Offset = time.Duration(a.t)
		flows[i] = f
	}
	return flows, nil
}

// newPairer returns how a flow from host index src picks its destination.
func newPairer(p PoissonParams, rng *rand.Rand) (func(src int) int, error) {
	n := len(p.Hosts)
	switch p.Pairing {
	case PairPermutation:
		if p.IntraRack != nil {
			return nil, fmt.Errorf("workload: intra_rack does not apply to permutation pairing (each host has one partner)")
		}
		d := derangement(n, rng)
		return func(src int) int { return d[src] }, nil
	case "", PairRandom:
	default:
		return nil, fmt.Errorf("workload: unknown pairing %q (random or permutation)", p.Pairing)
	}
	if p.IntraRack == nil {
		return func(src int) int {
			dst := rng.Intn(n - 1)
			if dst >= src {
				dst++
			}
			return dst
		}, nil
	}
	intra := *p.IntraRack
	if intra < 0 || intra > 1 {
		return nil, fmt.Errorf("workload: intra_rack %v must be in [0, 1]", intra)
	}
	same, other := make([][]int, n), make([][]int, n)
	for i, a := range p.Hosts {
		ra, ok := p.Racks[a.Host]
		if !ok {
			return nil, fmt.Errorf("workload: host %s has no rack (it is cabled to no switch)", a.Host)
		}
		for j, b := range p.Hosts {
			switch {
			case i == j:
			case p.Racks[b.Host] == ra:
				same[i] = append(same[i], j)
			default:
				other[i] = append(other[i], j)
			}
		}
		if intra > 0 && len(same[i]) == 0 {
			return nil, fmt.Errorf("workload: intra_rack %v, but host %s is alone in rack %s", intra, a.Host, ra)
		}
		if intra < 1 && len(other[i]) == 0 {
			return nil, fmt.Errorf("workload: intra_rack %v, but no host outside rack %s takes part", intra, ra)
		}
	}
	return func(src int) int {
		if rng.Float64() < intra {
			return same[src][rng.Intn(len(same[src]))]
		}
		return other[src][rng.Intn(len(other[src]))]
	}, nil
}

// derangement is a uniformly random permutation of 0..n-1 without fixed
// points (n >= 2): shuffles are redrawn until none maps to itself, which
// takes e ≈ 2.7 tries on average.
func derangement(n int, rng *rand.Rand) []int {
	for {
		d := rng.Perm(n)
		ok := true
		for i, v := range d {
			if i == v {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
}

// messageFor picks a message size of about msg (whole messages, at least
// perftest's 5 iterations) that covers size with less than one byte per
// message over.
func messageFor(size, msg int64) int64 {
	iters := max((size+msg-1)/msg, 5)
	return (size + iters - 1) / iters
}
