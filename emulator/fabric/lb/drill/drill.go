package drill

import "github.com/labctl/labctl/emulator/fabric/lb"

// Register adds DRILL to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "drill", Help: "per packet, the shortest of d random egress queues and m remembered", New: New,
		Params: []lb.Param{
			{Name: "d", Kind: lb.Int, Default: "2", Min: 1, Help: "random candidates sampled per packet (the DRILL paper's DRILL(2,1): d = 2)"},
			{Name: "m", Kind: lb.Int, Default: "1", Min: 1, Help: "best candidates remembered for the next packet (the DRILL paper's DRILL(2,1): m = 1)"},
		}})
}

type module struct {
	d, m int
	mem  map[key][]int // switch and candidate set -> remembered best
	top  []choice      // Select's scratch: the m best so far
	rng  lb.Rand
	// last is each flow's previous data egress link plus 1 (0: none yet),
	// by flow index and by the choosing switch's role for the flow: one
	// module serves every switch, and a flow crosses at most one switch
	// of a role that chooses (its source ToR, then an aggregation switch
	// on a fat-tree). Grown, never shrunk: no allocation once a run's
	// flows are known.
	last                [][roles]int32
	decisions, reroutes int64 // data packets chosen for, and those sent another way than their flow's last
}

// roles is how many switch roles (lb.Role) there are.
const roles = int(lb.Core) + 1

type key struct {
	sw    int
	first int32 // the candidate set, by its first link
}

// New makes a DRILL module.
func New(p lb.Params) (lb.Module, error) {
	return &module{d: p.Int("d"), m: p.Int("m"), mem: map[key][]int{}, top: make([]choice, p.Int("m")), rng: lb.NewRand(seed)}, nil
}

func (dr *module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	k := key{sw.ID(), c[0].Link}
	// the candidates: the m remembered, then d sampled; the m least loaded
	// of them are remembered for the next packet (the first is chosen)
	mem := dr.mem[k]
	top := dr.top // scratch of m, made once: no allocation per packet
	n := 0
	consider := func(i int) {
		for j := 0; j < n; j++ {
			if top[j].i == i {
				return
			}
		}
		q := sw.QueueBytes(c[i].Link, int(p.Priority))
		j := n
		for j > 0 && q < top[j-1].q { // stable: an earlier candidate wins a tie
			j--
		}
		if j >= dr.m {
			return
		}
		if n < dr.m {
			n++
		}
		copy(top[j+1:n], top[j:n-1])
		top[j] = choice{i, q}
	}
	for _, i := range mem {
		if i < len(c) {
			consider(i)
		}
	}
	for j := 0; j < dr.d; j++ {
		consider(int(dr.rng.Next(sw.Salt()) % uint64(len(c))))
	}
	mem = mem[:0]
	for _, t := range top[:n] {
		mem = append(mem, t.i)
	}
	dr.mem[k] = mem
	dr.count(p, c[top[0].i].Link)
	return top[0].i
}

// count counts a data packet's decision, and a reroute when its flow's
// previous packet left a switch of the same role (the same switch: a
// flow's path has one of each) on another link.
func (dr *module) count(p *lb.Packet, link int32) {
	if p.Kind != lb.Data || p.Flow < 0 {
		return
	}
	dr.decisions++
	i := int(p.Flow)
	if n := len(dr.last); i >= n {
		if i >= cap(dr.last) { // double: flows arrive in index order
			grown := make([][roles]int32, len(dr.last), max(2*cap(dr.last), i+1, 256))
			copy(grown, dr.last)
			dr.last = grown
		}
		dr.last = dr.last[:i+1]
		clear(dr.last[n:]) // an earlier run's entries
	}
	last := &dr.last[i][p.Role]
	if *last != 0 && *last != link+1 {
		dr.reroutes++
	}
	*last = link + 1
}

// Counts implements lb.Counting: data packets DRILL chose a link for at
// this switch, and those that left on another link than their flow's
// previous packet (each a chance of reordering).
func (dr *module) Counts(dst []lb.Count) []lb.Count {
	return append(dst, lb.Count{Name: lb.CountDecisions, Value: uint64(dr.decisions)},
		lb.Count{Name: lb.CountReroutes, Value: uint64(dr.reroutes)})
}

type choice struct {
	i int
	q int64
}

const seed = 0x2545f4914f6cdd1d

// Reset forgets the remembered ports and starts the random stream again,
// so a run does not depend on the ones before.
func (dr *module) Reset(lb.Switch) {
	clear(dr.mem)
	dr.rng = lb.NewRand(seed)
	dr.last, dr.decisions, dr.reroutes = dr.last[:0], 0, 0
}
