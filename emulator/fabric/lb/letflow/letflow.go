package letflow

import "github.com/labctl/labctl/emulator/fabric/lb"

// Register adds LetFlow to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "letflow", Help: "flowlet switching: a new flowlet takes a random path", New: New,
		Params: []lb.Param{{Name: "timeout_us", Kind: lb.Float, Default: "50", Unit: "us", Above: true,
			Help: "flowlet timeout: a gap longer than this starts a new flowlet (the FLB testbed's 50; SELB used 10)"}}})
}

type module struct {
	timeout  int64 // ns
	table    map[key]*flowlet
	rng      lb.Rand
	flowlets int64 // data flowlets started at source ToRs this run
	reroutes int64 // of them, those that took another path than the flow's last
}

type key struct {
	sw   int
	hash uint64
}

type flowlet struct {
	last   int64
	choice int
}

// New makes a LetFlow module.
func New(p lb.Params) (lb.Module, error) {
	return &module{timeout: p.Nanos("timeout_us"), table: map[key]*flowlet{}, rng: lb.NewRand(seed)}, nil
}

func (l *module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	k := key{sw.ID(), p.Hash}
	f, ok := l.table[k]
	now := sw.Now()
	if !ok {
		f = &flowlet{choice: -1}
		l.table[k] = f
	}
	if f.choice < 0 || f.choice >= len(c) || now-f.last > l.timeout {
		prev := f.choice
		f.choice = int(l.rng.Next(sw.Salt()^p.Hash) % uint64(len(c)))
		if p.Role == lb.SrcToR && p.Kind == lb.Data {
			l.flowlets++
			if prev >= 0 && prev != f.choice {
				l.reroutes++
			}
		}
	}
	f.last = now
	return f.choice
}

const seed = 0x9e3779b97f4a7c15

// Reset forgets the flowlets (a new run's clock starts at 0) and starts
// the random stream again, so a run does not depend on the ones before.
func (l *module) Reset(lb.Switch) {
	clear(l.table)
	l.rng = lb.NewRand(seed)
	l.flowlets, l.reroutes = 0, 0
}

// Flowlets is how many flowlets of data this module's switches started as
// a source ToR in the current run (a flow's first counts as one): the
// count HF²T's evaluation reports.
func (l *module) Flowlets() int64 { return l.flowlets }

// Counts implements lb.Counting: the flowlets started at source ToRs, and
// those that moved their flow to another uplink.
func (l *module) Counts(dst []lb.Count) []lb.Count {
	return append(dst, lb.Count{Name: lb.CountFlowlets, Value: uint64(l.flowlets)},
		lb.Count{Name: lb.CountReroutes, Value: uint64(l.reroutes)})
}
