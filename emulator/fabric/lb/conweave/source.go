package conweave

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Module is ConWeave on every switch it is given (tables keyed by
// Switch.ID): the source ToR's logic in Select and Receive, the
// destination ToR's in Arrive.
type Module struct {
	replyNs, busyNs, inactiveNs int64
	samples                     int
	pathAware                   bool
	ctrlBytes                   int

	rng   lb.Rand
	sws   []swState
	dest  *reorder.Dest
	ctl   lb.Header // a control packet's header, reused: Send copies it
	stats Stats
}

// Stats count what the module did over its life.
type Stats struct {
	Requests   int64 // RTT requests sent (one per epoch)
	Replies    int64 // RTT replies in time: the epoch ends without a reroute
	Late       int64 // RTT replies after their deadline (ignored)
	Timeouts   int64 // deadlines passed without a reply: the flow's next packet is the TAIL
	Reroutes   int64 // timeouts that moved the flow (a sampled path was not busy)
	Clears     int64 // CLEAR replies: the destination saw the tail, the reroute is over
	IdleMoves  int64 // flows back from θ_inactive put on a sampled path
	Notifies   int64 // NOTIFY packets sent (ECN-marked data at the destination ToR)
	MinWaitNs  int64 // shortest time from a request to the timeout that rerouted on it
	CtrlPkts   int64 // control packets sent (replies, clears, notifies)
	CtrlBytes  int64 // their bytes on the wire
	Reordering reorder.Stats
}

// Stats are the counters so far.
func (m *Module) Stats() Stats {
	s := m.stats
	s.Reordering = m.dest.Stats()
	return s
}

// swState is one switch's source-ToR tables.
type swState struct {
	tx   reorder.FlowTable[txFlow]
	busy [][]int64 // by destination ToR, then path ID: busy until (ns)
}

// txFlow is a flow's state at its source ToR.
type txFlow struct {
	used    bool
	stable  bool  // the epoch's reply or clear came: the next packet starts a new epoch
	phase1  bool  // the epoch rerouted: packets go REROUTED until the clear
	epoch   int64 // from 1
	path    int32
	active  int64 // last packet, ns
	reqAt   int64 // the epoch's request left, ns
	replyBy int64 // its reply's deadline (never: none awaited)
	tailAt  int64 // the epoch's tail left, ns (0: no tail)
}

const never = math.MaxInt64

func (m *Module) sw(id int) *swState {
	for len(m.sws) <= id {
		m.sws = append(m.sws, swState{})
	}
	return &m.sws[id]
}

func (s *swState) busyRow(sw lb.Switch, dst int) []int64 {
	for len(s.busy) <= dst {
		s.busy = append(s.busy, nil)
	}
	if s.busy[dst] == nil {
		s.busy[dst] = make([]int64, sw.Paths(sw.ID(), dst))
	}
	return s.busy[dst]
}

// Select runs at every switch with a choice: at the source ToR a data
// packet gets its flow's path pinned and its ConWeave fields; everything
// else (ACKs, CNPs, later hops of unpinned packets) goes by ECMP, as in
// the authors' code.
func (m *Module) Select(sw lb.Switch, p *lb.Packet, c []lb.Egress) int {
	if p.Kind != lb.Data || p.Role != lb.SrcToR || p.Flow < 0 || sw.Paths(sw.ID(), p.DstToR) < 2 {
		return lb.ECMP(p.Hash, sw.Salt(), len(c))
	}
	s := m.sw(sw.ID())
	f := s.tx.Get(p.Flow)
	now := sw.Now()
	expired := !f.used || now-f.active > m.inactiveNs
	fresh := expired || f.stable // a new epoch, with an RTT request
	timeout := false
	switch {
	case fresh:
		f.epoch++
		f.stable, f.phase1, f.tailAt = false, false, 0
		f.reqAt, f.replyBy = now, now+m.replyNs
		m.stats.Requests++
	case f.replyBy != never && now > f.replyBy:
		timeout = true
		f.replyBy, f.phase1, f.tailAt = never, true, now
		m.stats.Timeouts++
		if w := now - f.reqAt; m.stats.MinWaitNs == 0 || w < m.stats.MinWaitNs {
			m.stats.MinWaitNs = w
		}
	}
	f.active = now
	path := f.path // a TAIL still takes the old path
	switch {
	case expired:
		id, ok := m.choose(sw, s, p.DstToR)
		if ok || !f.used {
			if f.used {
				m.stats.IdleMoves++
			}
			f.path = id
		}
		f.used = true
		path = f.path
	case timeout:
		if id, ok := m.choose(sw, s, p.DstToR); ok {
			f.path = id
			m.stats.Reroutes++
		}
	}
	sw.Pin(p, int(path))
	reorder.Stamp(p.Hdr, f.epoch, timeout, f.phase1 && !timeout, now, f.tailAt)
	if fresh {
		p.Hdr.Flags |= lb.FlagRequest
	} else {
		p.Hdr.Flags &^= lb.FlagRequest
	}
	return 0
}

// choose samples paths to dst at random and takes the first not busy;
// false (and the first sample) if all were busy.
func (m *Module) choose(sw lb.Switch, s *swState, dst int) (int32, bool) {
	busy := s.busyRow(sw, dst)
	now, first := sw.Now(), int32(-1)
	for i := 0; i < m.samples; i++ {
		id := int32(m.rng.Next(sw.Salt()) % uint64(len(busy)))
		if first < 0 {
			first = id
		}
		if !m.pathAware || busy[id] <= now {
			return id, true
		}
	}
	return first, false
}

// Receive takes RTT replies, CLEARs and NOTIFYs at the source ToR.
func (m *Module) Receive(sw lb.Switch, p *lb.Packet) {
	h := p.Hdr
	s := m.sw(sw.ID())
	now := sw.Now()
	switch {
	case h.Flags&lb.FlagNotify != 0:
		if row := s.busyRow(sw, p.SrcToR); int(h.FBPath) < len(row) {
			row[h.FBPath] = now + m.busyNs
		}
	case h.Flags&lb.FlagReply != 0:
		f := s.tx.Get(int32(h.Words[0]))
		if reorder.Epoch(h) != f.epoch {
			return
		}
		clear := h.Flags&lb.FlagTail != 0
		switch {
		case clear && f.phase1:
			f.stable, f.replyBy = true, never
			m.stats.Clears++
		case !clear && !f.phase1 && f.replyBy != never && now <= f.replyBy:
			f.stable, f.replyBy = true, never
			m.stats.Replies++
		case !clear:
			m.stats.Late++
		}
	}
}
