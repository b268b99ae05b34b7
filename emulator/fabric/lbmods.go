package fabric

import (
	"fmt"
	"strconv"
)

// The baselines' load-balancing modules the papers compare against.

// letflow (Vanini et al.): a flow's packets keep their path while they come
// closer together than the flowlet timeout; after a longer gap the next
// flowlet takes a random path. Params: timeout_us (default 50, the FLB
// testbed's; SELB used 10).
type letflow struct {
	timeout int64 // ns
	table   map[flowletKey]*flowlet
	rng     uint64
}

type flowletKey struct {
	sw   string
	hash uint64
}

type flowlet struct {
	last   int64
	choice int
}

func newLetFlow(params map[string]string) (LB, error) {
	t, err := param(params, "timeout_us", 50)
	if err != nil {
		return nil, err
	}
	return &letflow{timeout: int64(t * 1000), table: map[flowletKey]*flowlet{}, rng: 0x9e3779b97f4a7c15}, nil
}

func (l *letflow) Select(sw Switch, p *PacketInfo, c []Egress) int {
	k := flowletKey{sw.Name(), p.Hash}
	f, ok := l.table[k]
	now := sw.Now()
	if !ok {
		f = &flowlet{choice: -1}
		l.table[k] = f
	}
	if f.choice < 0 || f.choice >= len(c) || now-f.last > l.timeout {
		f.choice = int(next(&l.rng, sw.Salt()^p.Hash) % uint64(len(c)))
	}
	f.last = now
	return f.choice
}

// drill (Ghorbani et al.), DRILL(d, m): per packet, the least-loaded of d
// random candidates and the m best remembered from last time. Params: d
// (default 2), m (default 1).
type drill struct {
	d, m int
	mem  map[drillKey][]int // switch and candidate set -> remembered best
	rng  uint64
}

func newDRILL(params map[string]string) (LB, error) {
	d, err := param(params, "d", 2)
	if err != nil {
		return nil, err
	}
	m, err := param(params, "m", 1)
	if err != nil {
		return nil, err
	}
	return &drill{d: int(d), m: int(m), mem: map[drillKey][]int{}, rng: 0x2545f4914f6cdd1d}, nil
}

func (dr *drill) Select(sw Switch, p *PacketInfo, c []Egress) int {
	key := drillKey{sw.Name(), c[0].Link}
	best, bestLoad := -1, int64(0)
	consider := func(i int) {
		if q := sw.QueueBytes(c[i].Link, p.Priority); best < 0 || q < bestLoad {
			best, bestLoad = i, q
		}
	}
	for _, i := range dr.mem[key] {
		if i < len(c) {
			consider(i)
		}
	}
	for j := 0; j < dr.d; j++ {
		consider(int(next(&dr.rng, sw.Salt()) % uint64(len(c))))
	}
	mem := append(dr.mem[key][:0], best)
	if len(mem) > dr.m {
		mem = mem[:dr.m]
	}
	dr.mem[key] = mem
	return best
}

type drillKey struct {
	sw    string
	first int32 // the candidate set, by its first link
}

// next is a xorshift64* step mixed with a salt: deterministic per run.
func next(state *uint64, salt uint64) uint64 {
	x := *state
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*state = x
	return mix(x*2685821657736338717 ^ salt)
}

func param(params map[string]string, name string, def float64) (float64, error) {
	v, ok := params[name]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("fabric: load-balancing parameter %s=%q: want a positive number", name, v)
	}
	return f, nil
}
