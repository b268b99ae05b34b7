package conga

import "github.com/labctl/labctl/emulator/fabric/lb"

// Register adds CONGA to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "conga", New: New,
		Help: "congestion-aware flowlets: each new flowlet takes the leaf-to-leaf path with the least max(local DRE, fed-back path metric)",
		Params: []lb.Param{
			{Name: "flowlet_timeout_us", Kind: lb.Float, Default: "10", Unit: "us", Above: true,
				Help: "a gap longer than this starts a new flowlet (SELB's setting; Reunion's motivation used 0.5 and 1, the ConWeave authors' ns-3 code 100, the CONGA paper 500)"},
			{Name: "dre_period_us", Kind: lb.Float, Default: "200", Unit: "us", Above: true,
				Help: "T_dre: every link's rate estimator decays by alpha this often (the ConWeave authors' ns-3 CONGA)"},
			{Name: "dre_alpha", Kind: lb.Float, Default: "0.2", Above: true, Max: 1,
				Help: "alpha: the estimator's decay per period; its time constant is dre_period_us/alpha (ns-3 CONGA: 0.2, 1 ms)"},
			{Name: "quant_bits", Kind: lb.Int, Default: "3", Min: 1, Max: 16,
				Help: "Q: congestion metrics are the estimate in 2^Q levels of the link's capacity (the CONGA paper and ns-3: 3)"},
			{Name: "metric_age_us", Kind: lb.Float, Default: "10000", Unit: "us", Above: true,
				Help: "a remote path metric not refreshed for this long counts as 0, and is no longer fed back (ns-3 CONGA: 10 ms)"},
		}})
}

// module is CONGA on one switch, or on several: its tables are keyed by
// switch ID (links belong to one switch, flow directions to one source ToR).
type module struct {
	timeout, age int64 // ns
	dc           dreConfig
	dre          []dre       // per link
	sws          []*swTables // per switch, on first use
	flowlets     []flowlet   // per flow and direction: 2×flow (data), 2×flow+1 (ACK, NACK, CNP)
	rng          lb.Rand
	newFlowlets  int64 // flowlets started, every direction (tests)
	// data flowlets started (Counts), and of them those that took another
	// path than the flow's last
	dataFlowlets, reroutes int64
}

// swTables are one leaf's congestion tables, per other leaf.
type swTables struct {
	toLeaf, fromLeaf []*pathMetrics
}

type flowlet struct {
	last  int64 // ns: its last packet
	path  int32 // pinned path
	cand  int16 // the candidate link the path starts with
	valid bool
}

// ceWord is the header word that carries CE, the path's congestion so far.
const ceWord = 0

const seed = 0x4f1bbcdcbfa53e0b

// New makes a CONGA module.
func New(p lb.Params) (lb.Module, error) {
	period := max(int64(p.Float("dre_period_us")*1000), 1)
	return &module{
		timeout: p.Nanos("flowlet_timeout_us"),
		age:     p.Nanos("metric_age_us"),
		dc:      dreConfig{period: period, keep: 1 - p.Float("dre_alpha"), levels: float64(int(1) << p.Int("quant_bits"))},
		rng:     lb.NewRand(seed),
	}, nil
}

// Reset forgets everything: a new run's clock starts at 0.
func (m *module) Reset(lb.Switch) {
	clear(m.dre)
	clear(m.sws)
	m.flowlets = m.flowlets[:0]
	m.rng = lb.NewRand(seed)
	m.newFlowlets, m.dataFlowlets, m.reroutes = 0, 0, 0
}

// Select runs at a packet's source ToR, and elsewhere only where a path
// was not pinned (then it hashes, as ECMP does).
func (m *module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Role != lb.SrcToR || p.Flow < 0 { // checked first: every hop of every packet asks
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	src, dst := sw.ID(), p.DstToR
	n := sw.Paths(src, dst)
	if n == 0 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	now := sw.Now()
	f := m.flowlet(p)
	if !f.valid || now-f.last > m.timeout || int(f.path) >= n {
		prev := int32(-1)
		if f.valid {
			prev = f.path
		}
		f.path, f.valid = m.best(sw, src, dst, n, prev), true
		f.cand = 0
		first := sw.Path(src, dst, int(f.path))[0].Link
		for i := range c {
			if c[i].Link == first {
				f.cand = int16(i)
			}
		}
		m.newFlowlets++
		if p.Kind == lb.Data {
			m.dataFlowlets++
			if prev >= 0 && prev != f.path {
				m.reroutes++
			}
		}
	}
	f.last = now
	if !sw.Pin(p, int(f.path)) {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	return int(f.cand)
}

// flowlet is the flowlet entry of p's flow and direction (grown, never
// shrunk: no allocation once a run's flows are known).
func (m *module) flowlet(p *lb.Packet) *flowlet {
	i := 2 * int(p.Flow)
	if p.Kind != lb.Data {
		i++
	}
	if i >= len(m.flowlets) {
		if i >= cap(m.flowlets) { // double: flows arrive in index order
			grown := make([]flowlet, len(m.flowlets), max(2*cap(m.flowlets), i+1, 256))
			copy(grown, m.flowlets)
			m.flowlets = grown
		}
		n := len(m.flowlets)
		m.flowlets = m.flowlets[:i+1]
		clear(m.flowlets[n:]) // a previous run's entries
	}
	return &m.flowlets[i]
}

// best is the path from src to leaf dst with the least congestion, the
// max of its local uplink's DRE and the metric dst fed back; ties go to
// prev (a flowlet moves only to a strictly better path, as in the paper),
// else to a random one of the best.
func (m *module) best(sw lb.Switch, src, dst, n int, prev int32) int32 {
	now := sw.Now()
	remote := m.tables(sw, src).to(sw, src, dst)
	best, bestMetric, ties := int32(-1), int32(0), uint64(0)
	for id := 0; id < n; id++ {
		up := sw.Path(src, dst, id)[0].Link
		metric := max(m.load(sw, up, now), remote.get(id, now, m.age))
		switch {
		case best < 0 || metric < bestMetric:
			best, bestMetric, ties = int32(id), metric, 1
		case metric == bestMetric:
			ties++ // reservoir sampling: each of the best equally likely
			if m.rng.Next(sw.Salt())%ties == 0 {
				best = int32(id)
			}
		}
	}
	if prev >= 0 && int(prev) < n && best != prev {
		up := sw.Path(src, dst, int(prev))[0].Link
		if max(m.load(sw, up, now), remote.get(int(prev), now, m.age)) == bestMetric {
			return prev
		}
	}
	return best
}

// load is link li's quantised DRE at time now.
func (m *module) load(sw lb.Switch, li int32, now int64) int32 {
	d := m.meter(sw, li)
	d.at(m.dc, now)
	return d.metric(m.dc, sw.LinkGbps(li))
}

func (m *module) meter(sw lb.Switch, li int32) *dre {
	if m.dre == nil {
		m.dre = make([]dre, sw.NumLinks())
	}
	return &m.dre[li]
}

// Dequeue meters every packet leaving a port and raises a pinned packet's
// CE to the link's DRE.
func (m *module) Dequeue(sw lb.Switch, p *lb.Packet, out lb.Egress) {
	now := sw.Now()
	d := m.meter(sw, out.Link)
	d.add(m.dc, now, p.Bytes)
	if p.Hdr.Flags&lb.FlagPinned != 0 {
		p.Hdr.Words[ceWord] = max(p.Hdr.Words[ceWord], int64(d.metric(m.dc, sw.LinkGbps(out.Link))))
	}
}

// Arrive piggybacks feedback at the source ToR and learns at the
// destination ToR: the arriving path's CE (From-Leaf) and the feedback
// the packet carries about this leaf's paths toward its sender (To-Leaf).
func (m *module) Arrive(sw lb.Switch, p *lb.Packet, _ lb.Egress) lb.Queue {
	switch p.Role {
	case lb.SrcToR:
		id, metric, ok := m.tables(sw, sw.ID()).from(sw, p.DstToR, sw.ID()).feedback(sw.Now(), m.age)
		if ok {
			p.Hdr.FBPath, p.Hdr.FBMetric = id, metric
			p.Hdr.Flags |= lb.FlagFeedback
		}
	case lb.DstToR:
		t, now := m.tables(sw, sw.ID()), sw.Now()
		if p.Hdr.Flags&lb.FlagFeedback != 0 {
			t.to(sw, sw.ID(), p.SrcToR).set(p.Hdr.FBPath, p.Hdr.FBMetric, now)
		}
		if p.Hdr.Flags&lb.FlagPinned != 0 {
			t.from(sw, p.SrcToR, sw.ID()).set(p.Hdr.Path, int32(p.Hdr.Words[ceWord]), now)
		}
	}
	return lb.Normal
}

func (m *module) tables(sw lb.Switch, id int) *swTables {
	if m.sws == nil {
		m.sws = make([]*swTables, sw.NumSwitches())
	}
	t := m.sws[id]
	if t == nil {
		t = &swTables{toLeaf: make([]*pathMetrics, sw.NumSwitches()), fromLeaf: make([]*pathMetrics, sw.NumSwitches())}
		m.sws[id] = t
	}
	return t
}

// to is the To-Leaf table of leaf me about its paths toward leaf dst.
func (t *swTables) to(sw lb.Switch, me, dst int) *pathMetrics {
	if t.toLeaf[dst] == nil {
		t.toLeaf[dst] = newPathMetrics(sw.Paths(me, dst))
	}
	return t.toLeaf[dst]
}

// from is the From-Leaf table of leaf me about the paths from leaf src.
func (t *swTables) from(sw lb.Switch, src, me int) *pathMetrics {
	if t.fromLeaf[src] == nil {
		t.fromLeaf[src] = newPathMetrics(sw.Paths(src, me))
	}
	return t.fromLeaf[src]
}

// Counts implements lb.Counting: data flowlets started at this source
// ToR, and those that moved their flow to another path.
func (m *module) Counts(dst []lb.Count) []lb.Count {
	return append(dst, lb.Count{Name: lb.CountFlowlets, Value: uint64(m.dataFlowlets)},
		lb.Count{Name: lb.CountReroutes, Value: uint64(m.reroutes)})
}
