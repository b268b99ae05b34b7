package hf2t

import (
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Register adds HF²T to r.
func Register(r *hostlb.Registry) error {
	return r.Register(hostlb.Scheme{Name: "hf2t", New: New,
		Help:  "host-based flowlet fine-tuning: hold a packet after a tail gap until the gap reaches the switches' flowlet timeout",
		Needs: "the paper's authors plan it for SmartNICs such as BlueField-3; stock ConnectX pacing cannot hold single packets",
		Params: []lb.Param{
			{Name: "flowlet_us", Kind: lb.Float, Default: "25", Unit: "us", Above: true,
				Help: "the switches' flowlet timeout (set LetFlow's timeout_us to match): a held packet leaves 1 ns past it; the paper gives no value, 25 is about 2 base RTTs of a k=4 fat-tree at 1 us links and won a sweep (docs/fabric-twin.md)"},
			{Name: "percentile", Kind: lb.Float, Default: "99", Min: 50, Max: 99.99,
				Help: "T is this percentile of the gaps learned in pre-training (the paper recommends 97.5 to 99 and evaluates 99)"},
			{Name: "t_us", Kind: lb.Float, Default: "0", Unit: "us",
				Help: "a fixed T instead of a learned one (0: learn it)"},
			{Name: "pretrain_gaps", Kind: lb.Int, Default: "1000", Min: 100,
				Help: "pre-training: gaps the host records, over all its flows, before it sets T and holds any packet; T is then refreshed every as many gaps from all it recorded in the run"},
			{Name: "dynamic", Kind: lb.Bool, Default: "true",
				Help: "scale T by alpha from x, the packets sent since the last stretched gap (false: the paper's No Dynamic T)"},
			{Name: "min_thr", Kind: lb.Int, Default: "20", Min: 1,
				Help: "packets: for x <= min_thr, alpha = min_thr/x (fewer very short flowlets)"},
			{Name: "max_thr", Kind: lb.Int, Default: "80", Min: 1,
				Help: "packets: for x >= max_thr, alpha = max_thr/x (long flowlets break up sooner)"},
		}})
}

// Module is one host's HF²T.
type Module struct {
	flowlet        int64 // ns
	pct            float64
	fixedT         int64 // ns; 0: learn
	pretrain       uint64
	dynamic        bool
	minThr, maxThr int64

	t     int64 // ns; 0 until set
	hist  gapHist
	flows []flow // by flow index
	stats Stats
}

type flow struct {
	last int64 // ns: when its previous packet left; -1: none yet
	x    int64 // packets since the last stretched gap
}

// Stats is what the module did in the current run.
type Stats struct {
	Gaps      uint64 // gaps seen (packets after a flow's first)
	Natural   uint64 // gaps at or above the flowlet timeout
	Stretched uint64 // gaps held up to it
	MaxHoldNs int64
	T         int64 // ns; 0 while pre-training
}

// New makes an HF²T module.
func New(p lb.Params) (hostlb.Module, error) {
	if p.Int("min_thr") >= p.Int("max_thr") {
		return nil, fmt.Errorf("min_thr %d must be below max_thr %d", p.Int("min_thr"), p.Int("max_thr"))
	}
	return &Module{flowlet: p.Nanos("flowlet_us"), pct: p.Float("percentile"), fixedT: p.Nanos("t_us"),
		pretrain: uint64(p.Int("pretrain_gaps")), dynamic: p.Bool("dynamic"),
		minThr: int64(p.Int("min_thr")), maxThr: int64(p.Int("max_thr")), t: p.Nanos("t_us")}, nil
}

// Stats is what the module did since the run started.
func (m *Module) Stats() Stats { s := m.stats; s.T = m.t; return s }

// Reset starts a run: flows are the new run's, and T is learned again
// (or set, when fixed).
func (m *Module) Reset(hostlb.Host) {
	m.flows = m.flows[:0]
	m.hist = gapHist{}
	m.stats = Stats{}
	m.t = m.fixedT
}

// Send is the paper's per-packet logic: the gap since the flow's previous
// packet; at or above the flowlet timeout, a natural boundary; else at or
// above T·α, hold the packet until the gap is 1 ns past the timeout (a
// switch starts a flowlet on a gap longer than its timeout) and count x
// from 0 again; else send it. x counts from the last stretched gap, as the
// paper defines it (whether a natural boundary resets it too the paper
// does not say; here it does not).
func (m *Module) Send(h hostlb.Host, p *hostlb.Packet) int64 {
	f := m.flow(p.Flow)
	now := h.Now()
	var hold int64
	if f.last >= 0 {
		gap := now - f.last
		m.stats.Gaps++
		if m.fixedT == 0 { // learn: T from every gap so far, refreshed every pretrain gaps
			if m.hist.add(gap); m.hist.n%m.pretrain == 0 {
				m.t = m.hist.tail(m.pct)
			}
		}
		switch {
		case gap >= m.flowlet:
			m.stats.Natural++
		case m.t > 0 && m.over(gap, f.x):
			hold = m.flowlet + 1 - gap
			f.x = 0
			m.stats.Stretched++
			m.stats.MaxHoldNs = max(m.stats.MaxHoldNs, hold)
		}
	}
	f.x++
	f.last = now + hold
	return hold
}

// over is gap >= T·α, α = min_thr/x up to min_thr, max_thr/x from
// max_thr, 1 between (always 1 without dynamic T); in integers.
func (m *Module) over(gap, x int64) bool {
	switch {
	case !m.dynamic || x > m.minThr && x < m.maxThr:
		return gap >= m.t
	case x <= m.minThr:
		return gap*max(x, 1) >= m.t*m.minThr
	}
	return gap*x >= m.t*m.maxThr
}

// flow is flow i's state, the table grown (not per packet: flows come in
// index order) to hold it.
func (m *Module) flow(i int32) *flow {
	for int(i) >= len(m.flows) {
		if len(m.flows) == cap(m.flows) {
			grown := make([]flow, len(m.flows), max(2*cap(m.flows), int(i)+1, 64))
			copy(grown, m.flows)
			m.flows = grown
		}
		m.flows = append(m.flows, flow{last: -1})
	}
	return &m.flows[i]
}
