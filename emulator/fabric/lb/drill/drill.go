package drill

import "github.com/labctl/labctl/emulator/fabric/lb"

// Register adds DRILL to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "drill", Help: "per packet, the shortest of d random egress queues and m remembered", New: New,
		Params: []lb.Param{
			{Name: "d", Kind: lb.Int, Default: "2", Min: 1, Help: "random candidates sampled per packet"},
			{Name: "m", Kind: lb.Int, Default: "1", Min: 1, Help: "best candidates remembered for the next packet"},
		}})
}

type module struct {
	d, m int
	mem  map[key][]int // switch and candidate set -> remembered best
	rng  lb.Rand
}

type key struct {
	sw    int
	first int32 // the candidate set, by its first link
}

// New makes a DRILL module.
func New(p lb.Params) (lb.Module, error) {
	return &module{d: p.Int("d"), m: p.Int("m"), mem: map[key][]int{}, rng: lb.NewRand(seed)}, nil
}

func (dr *module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	k := key{sw.ID(), c[0].Link}
	best, bestLoad := -1, int64(0)
	consider := func(i int) {
		if q := sw.QueueBytes(c[i].Link, int(p.Priority)); best < 0 || q < bestLoad {
			best, bestLoad = i, q
		}
	}
	for _, i := range dr.mem[k] {
		if i < len(c) {
			consider(i)
		}
	}
	for j := 0; j < dr.d; j++ {
		consider(int(dr.rng.Next(sw.Salt()) % uint64(len(c))))
	}
	mem := append(dr.mem[k][:0], best)
	if len(mem) > dr.m {
		mem = mem[:dr.m]
	}
	dr.mem[k] = mem
	return best
}

const seed = 0x2545f4914f6cdd1d

// Reset forgets the remembered ports and starts the random stream again,
// so a run does not depend on the ones before.
func (dr *module) Reset(lb.Switch) { clear(dr.mem); dr.rng = lb.NewRand(seed) }
