package flbrc

import (
	"github.com/labctl/labctl/emulator/fabric/hostlb"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/flb"
)

// Register adds FLB+RC to r.
func Register(r *hostlb.Registry) error {
	return r.Register(hostlb.Scheme{Name: "flbrc", New: New,
		Help:  "FLB's minimal rate control: line rate from the start, pause on a congestion CNM, resume at C/n on the release (run it with the flb switch image)",
		Needs: "the paper implements it in DPDK hosts; a ConnectX QP cannot be paused and re-rated per notification by firmware",
		Params: []lb.Param{
			{Name: "pause_timeout_us", Kind: lb.Float, Default: "1000", Unit: "us", Above: true,
				Help: "a paused flow whose release CNM has not come resumes (at C/n) after this long (the switches' entry timeout; the paper relies on timeouts for lost release CNMs without a value)"},
			{Name: "restore_us", Kind: lb.Float, Default: "1000", Unit: "us",
				Help: "a flow that has had no CNM for this long returns to line rate (0: never, as the paper has it: the rate follows n and nothing else, and a flow cut to C/n in a burst stays there; in the micro-benchmark f2 then took 634 ms instead of 9.4; the default, the switches' entry timeout, won a sweep: docs/fabric-twin.md, FLB)"},
		}})
}

// Module is one host's FLB+RC.
type Module struct {
	pauseTimeout, restore int64 // ns
	flows                 []flow
	stats                 Stats
}

type flow struct {
	n        int64 // the largest n of its current congestion episode; 0: none
	lastCNM  int64 // ns
	pausedAt int64 // ns; -1: not paused by this module
}

// Stats is what the module did in the current run.
type Stats struct {
	Congestion, Release uint64 // CNMs taken
	Pauses, Resumes     uint64
	TimedOut            uint64 // resumes on the pause timeout
	Restored            uint64 // flows back at line rate (restore_us)
	LastRateGbps        float64
	LastN               int64
}

// New makes an FLB+RC module.
func New(p lb.Params) (hostlb.Module, error) {
	return &Module{pauseTimeout: p.Nanos("pause_timeout_us"), restore: p.Nanos("restore_us")}, nil
}

// Stats is what the module did since the run started.
func (m *Module) Stats() Stats { return m.stats }

// Reset starts a run.
func (m *Module) Reset(hostlb.Host) { m.flows = m.flows[:0]; m.stats = Stats{} }

// Send lets every packet go at once: the flow's rate is the NIC's (line
// rate until a CNM sets it).
func (m *Module) Send(hostlb.Host, *hostlb.Packet) int64 { return 0 }

// Notify acts on a CNM about one of the host's flows.
func (m *Module) Notify(h hostlb.Host, p *hostlb.Packet) {
	if p.Hdr == nil || p.Hdr.Flags&lb.FlagNotify == 0 {
		return
	}
	f := m.flow(p.Flow)
	now := h.Now()
	f.lastCNM = now
	if p.Hdr.Flags&flb.FlagCongested == 0 {
		m.stats.Release++
		m.resume(h, p.Flow, f)
		return
	}
	m.stats.Congestion++
	n := max(p.Hdr.Words[flb.WordN], 1)
	f.n = max(f.n, n)
	rate := h.LineGbps(p.Flow) / float64(f.n)
	h.SetRate(p.Flow, rate)
	m.stats.LastRateGbps, m.stats.LastN = rate, f.n
	if f.pausedAt < 0 && !h.Paused(p.Flow) {
		h.Pause(p.Flow)
		f.pausedAt = now
		m.stats.Pauses++
		h.Schedule(m.pauseTimeout, int64(p.Flow))
	}
}

func (m *Module) resume(h hostlb.Host, fl int32, f *flow) {
	if f.pausedAt >= 0 {
		f.pausedAt = -1
		h.Resume(fl)
		m.stats.Resumes++
	}
	f.n = 0 // the next congestion episode counts n afresh
	if m.restore > 0 {
		h.Schedule(m.restore, int64(fl))
	}
}

// Tick is a flow's timer: the pause timeout, or the restore to line rate.
func (m *Module) Tick(h hostlb.Host, arg int64) {
	fl := int32(arg)
	f := m.flow(fl)
	now := h.Now()
	if f.pausedAt >= 0 && now-f.pausedAt >= m.pauseTimeout {
		m.stats.TimedOut++
		m.resume(h, fl, f)
		return
	}
	if m.restore > 0 && f.pausedAt < 0 && now-f.lastCNM >= m.restore && h.Rate(fl) < h.LineGbps(fl) {
		h.SetRate(fl, h.LineGbps(fl))
		m.stats.Restored++
	}
}

// flow is flow i's state; the table grows by append (amortised: flows
// come in index order), not per packet.
func (m *Module) flow(i int32) *flow {
	if n := len(m.flows); int(i) >= n {
		m.flows = append(m.flows, make([]flow, int(i)+1-n)...)
		for k := n; k < len(m.flows); k++ {
			m.flows[k].pausedAt = -1
		}
	}
	return &m.flows[i]
}
