package flb

import (
	"math/bits"
	"slices"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// portState is one egress link's congestion state: past K, and the flows
// told so.
type portState struct {
	congested bool
	prio      uint8
	told      int     // the n the port's flows were last all told
	flows     []int32 // congested flows (those whose packets joined the queue past K)
}

// watch checks the egress queue p joins against K: past it, p's flow is
// congested there, and a CNM with n (the port's congested flows) goes back
// towards its source. When n has grown by a quarter since the port's
// flows were last told, all of them are told the new n (FLB+RC's rate
// follows n), not on every new flow: that would cost n² CNMs a burst.
func (m *Module) watch(sw lb.Switch, st *swState, p *lb.Packet, out lb.Egress) {
	k := m.threshold(sw, st, out.Link, p.Bytes)
	q := sw.QueueBytes(out.Link, int(p.Priority))
	if q < k {
		return
	}
	ps := &st.ports[out.Link]
	ps.congested, ps.prio = true, p.Priority
	if slices.Contains(ps.flows, p.Flow) {
		return
	}
	ps.flows = append(ps.flows, p.Flow)
	n := len(ps.flows)
	if m.stats.FirstCNMNs < 0 {
		m.stats.FirstCNMNs, m.stats.FirstCNMQ, m.stats.FirstCNMK, m.stats.FirstCNMLink = sw.Now(), q, k, out.Link
	}
	if n >= ps.told+ps.told/4+1 {
		ps.told = n
		for _, f := range ps.flows {
			m.send(sw, st, f, n, true)
		}
		return
	}
	m.send(sw, st, p.Flow, n, true)
}

// drained releases a congested port whose queue fell below K: a release
// CNM for each of its flows.
func (m *Module) drained(sw lb.Switch, st *swState, ps *portState, link int32) {
	if sw.QueueBytes(link, int(ps.prio)) >= st.k[link] {
		return
	}
	for _, f := range ps.flows {
		m.send(sw, st, f, 0, false)
	}
	ps.congested, ps.told, ps.flows = false, 0, ps.flows[:0]
}

// send makes a CNM about flow and starts it back towards the flow's source.
func (m *Module) send(sw lb.Switch, st *swState, flow int32, n int, congested bool) {
	m.cnm = lb.Header{Flags: lb.FlagNotify, TS: sw.Now()}
	if congested {
		m.cnm.Flags |= FlagCongested
	}
	m.cnm.Words[WordFlow], m.cnm.Words[WordN], m.cnm.Words[WordOrigin] = int64(flow), int64(n), int64(sw.ID())
	m.stats.CNMs++
	m.relay(sw, st)
}

// relay passes the CNM in m.cnm one hop back: to the switch the flow's
// data came from, or, where it came from a host, to this switch's own
// isolation table (it is the source ToR). A flow the switch has not seen
// is dropped.
func (m *Module) relay(sw lb.Switch, st *swState) {
	flow := int32(m.cnm.Words[WordFlow])
	if int(flow) >= len(st.prev) {
		return
	}
	switch prev := st.prev[flow]; {
	case prev == 1:
		m.atSource(sw, st, flow)
	case prev >= 2:
		sw.Send(int(prev-2), m.c.cnmBytes, &m.cnm)
	}
}

// Receive takes a CNM from the next switch on a flow's path and relays it.
func (m *Module) Receive(sw lb.Switch, p *lb.Packet) {
	if p.Hdr.Flags&lb.FlagNotify == 0 {
		return
	}
	m.cnm = *p.Hdr
	m.cnm.Words[WordHops]++
	m.stats.Relays++
	m.relay(sw, m.sw(sw))
}

// atSource acts on a CNM at the flow's source ToR: isolate or release the
// flow (if it crossed the fabric: a flow within one ToR has one path), and
// forward the CNM to the sending host.
func (m *Module) atSource(sw lb.Switch, st *swState, flow int32) {
	m.stats.AtSource++
	m.stats.MaxHops = max(m.stats.MaxHops, m.cnm.Words[WordHops])
	congested := m.cnm.Flags&FlagCongested != 0
	if int(flow) < len(st.flows) && st.flows[flow].valid {
		f := &st.flows[flow]
		if t := st.toward[f.dst]; t != nil {
			if congested {
				m.isolate(sw, st, t, flow, int32(m.cnm.Words[WordN]))
			} else if f.congested {
				m.unisolate(sw, st, t, flow)
				m.stats.Released++
			}
		}
	}
	if m.c.notifyHosts {
		m.note = lb.Packet{Kind: lb.Data, Flow: flow}
		if sw.Notify(&m.note, m.c.cnmBytes, &m.cnm) {
			m.stats.HostNotices++
		}
	}
}

// need is the number of isolation paths for t's congested flows: the sum
// of their converged rates C/n over C, rounded up, and at least one path
// left for the others.
func need(st *swState, t *pairState) int {
	var sum float64
	for _, fl := range t.congested {
		sum += 1 / float64(max(st.flows[fl].n, 1))
	}
	k := int(sum)
	if float64(k) < sum {
		k++
	}
	return max(1, min(k, len(t.q)-1, 64))
}

// isolate puts flow in the isolation table with n, on an isolation path:
// the one its last packet took if a path may be added, else one of them
// at random; then adds least-delay paths until there are enough.
func (m *Module) isolate(sw lb.Switch, st *swState, t *pairState, flow, n int32) {
	f := &st.flows[flow]
	f.n, f.hit = n, sw.Now()
	if !f.congested {
		f.congested = true
		t.congested = append(t.congested, flow)
		m.stats.Isolated++
	}
	k := need(st, t)
	if len(t.q) < 2 || f.path >= 64 {
		return
	}
	if !t.isolated(f.path) {
		if bits.OnesCount64(t.iso) < k {
			t.iso |= 1 << f.path
		} else {
			f.path = m.randomIsolated(sw, t)
		}
	}
	for bits.OnesCount64(t.iso) < k {
		t.iso |= 1 << m.best(sw, t, int(f.dst), 3, min(len(t.q), 64), sw.Now())
	}
	if !st.ticking {
		st.ticking = true
		sw.Schedule(m.c.check, 0)
	}
}

func (m *Module) randomIsolated(sw lb.Switch, t *pairState) int32 {
	i := int(m.rng.Next(sw.Salt()) % uint64(bits.OnesCount64(t.iso)))
	set := t.iso
	for ; i > 0; i-- {
		set &= set - 1
	}
	return int32(bits.TrailingZeros64(set))
}

// unisolate takes flow out of the isolation table and frees surplus
// isolation paths.
func (m *Module) unisolate(sw lb.Switch, st *swState, t *pairState, flow int32) {
	st.flows[flow].congested = false
	if i := slices.Index(t.congested, flow); i >= 0 {
		t.congested = slices.Delete(t.congested, i, i+1)
	}
	m.shrink(sw, st, t)
}

// shrink keeps as isolation paths only those congested flows are on, and
// no more than they need: the flows of a surplus path move to the others.
func (m *Module) shrink(sw lb.Switch, st *swState, t *pairState) {
	t.iso = 0
	for _, fl := range t.congested {
		if p := st.flows[fl].path; p < 64 {
			t.iso |= 1 << p
		}
	}
	if len(t.congested) == 0 {
		return
	}
	for k := need(st, t); bits.OnesCount64(t.iso) > k; {
		drop := int32(63 - bits.LeadingZeros64(t.iso))
		t.iso &^= 1 << drop
		for _, fl := range t.congested {
			if st.flows[fl].path == drop {
				st.flows[fl].path = m.randomIsolated(sw, t)
			}
		}
	}
}

// Tick sweeps a source ToR's isolation tables: entries not hit for the
// entry timeout go (a lost release CNM), and the isolation paths are
// recounted.
func (m *Module) Tick(sw lb.Switch, _ int64) {
	st := m.sw(sw)
	st.ticking = false
	now, busy := sw.Now(), false
	for _, t := range st.toward {
		if t == nil || len(t.congested) == 0 {
			continue
		}
		for i := len(t.congested) - 1; i >= 0; i-- {
			if fl := t.congested[i]; now-st.flows[fl].hit > m.c.entryAge {
				st.flows[fl].congested = false
				t.congested = slices.Delete(t.congested, i, i+1)
				m.stats.TimedOut++
			}
		}
		m.shrink(sw, st, t)
		busy = busy || len(t.congested) > 0
	}
	if busy {
		st.ticking = true
		sw.Schedule(m.c.check, 0)
	}
}
