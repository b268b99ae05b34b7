package fabric

import (
	"encoding/binary"
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// The packet engine's side of the load-balancing module interface (package
// lb): each switch runs a module or, with none, the built-in ECMP hash; a
// module's optional hooks are found once, when it is set, so that a switch
// without them pays nothing per packet.

// Modules makes load-balancing modules by scheme name and parameters: the
// caller's registry (an *lb.Registry). The engine names no scheme itself.
type Modules interface {
	New(name string, params map[string]string) (lb.Module, error)
}

// swMod is a switch's module and the optional hooks it implements.
type swMod struct {
	m      lb.Module // nil: built-in ECMP
	arrive lb.Arriver
	deq    lb.Dequeuer
	recv   lb.Receiver
	tick   lb.Ticker
	reset  lb.Resetter
}

func (e *PacketEngine) setModule(sw int32, m lb.Module) {
	s := swMod{m: m}
	s.arrive, _ = m.(lb.Arriver)
	s.deq, _ = m.(lb.Dequeuer)
	s.recv, _ = m.(lb.Receiver)
	s.tick, _ = m.(lb.Ticker)
	s.reset, _ = m.(lb.Resetter)
	e.mods[sw] = s
	e.arrives[sw] = s.arrive != nil
	for i := range e.links {
		if l := &e.links[i]; l.atSwitch && l.sw == sw {
			l.deqHook = s.deq != nil
		}
	}
}

// SetSwitchLB makes one switch forward with m from the next run on (a
// switch that started an image naming another scheme); nil is the
// built-in ECMP. The module's state starts afresh, as a restarted
// program's registers do.
func (e *PacketEngine) SetSwitchLB(name string, m lb.Module) error {
	id, err := lookup(e.swID, "switch", name)
	if err != nil {
		return err
	}
	e.setModule(id, m)
	e.install(id)
	return nil
}

// install tells switch sw's module, if an lb.Installer, it is set there.
func (e *PacketEngine) install(sw int32) {
	if in, ok := e.mods[sw].m.(lb.Installer); ok {
		in.Install(e.sws[sw])
	}
}

// tiers places every switch by its hop distance from the nearest host: 1
// is a ToR, the largest distance the core, anything between aggregation.
func (e *PacketEngine) tiers() {
	dist := make([]int, len(e.sws))
	var frontier []int32
	for i := range e.links {
		l := &e.links[i]
		if !l.atSwitch && l.swTo >= 0 && dist[l.swTo] == 0 {
			dist[l.swTo] = 1
			frontier = append(frontier, l.swTo)
		}
	}
	top := 1
	for len(frontier) > 0 {
		var next []int32
		for i := range e.links {
			l := &e.links[i]
			if l.atSwitch && l.swTo >= 0 && dist[l.sw] > 0 && dist[l.swTo] == 0 {
				dist[l.swTo] = dist[l.sw] + 1
				top = max(top, dist[l.swTo])
				next = append(next, l.swTo)
			}
		}
		frontier = next
	}
	e.tier = make([]lb.Tier, len(e.sws))
	for i, d := range dist {
		switch {
		case d == 1:
			e.tier[i] = lb.TierToR
		case d == top:
			e.tier[i] = lb.TierCore
		default:
			e.tier[i] = lb.TierAgg
		}
	}
}

// role is what switch sw is for a packet between ToRs src and dst.
func (e *PacketEngine) role(sw, src, dst int32) lb.Role {
	switch e.tier[sw] {
	case lb.TierCore:
		return lb.Core
	case lb.TierAgg:
		return lb.Agg
	}
	switch {
	case sw == src && sw == dst:
		return lb.SameToR
	case sw == src:
		return lb.SrcToR
	case sw == dst:
		return lb.DstToR
	}
	return lb.Transit
}

// view is the module's view of packet p at switch sw (one view, reused:
// no allocation).
func (e *PacketEngine) view(sw int32, p *packet) *lb.Packet {
	e.pvPkt = p
	return e.fill(&e.pv, sw, p)
}

// fill writes packet p at switch sw into view v.
func (e *PacketEngine) fill(v *lb.Packet, sw int32, p *packet) *lb.Packet {
	if p.kind == pktCtl {
		from, to := int32(p.psn), int32(p.sack)
		*v = lb.Packet{Kind: lb.Control, Role: e.role(sw, from, to), Priority: p.prio, Flow: -1, Bytes: p.wire,
			Hash: ctlKey(from, to), Src: e.sws[from].name, Dst: e.sws[to].name, SrcToR: int(from), DstToR: int(to),
			InLink: p.inLink, Hdr: &p.hdr}
		return v
	}
	q := e.qps[p.qp]
	t := e.qpToR[p.qp]
	src, dst, key := q.flow.Src, q.flow.Dst, dataKey(q.fwdKey, p)
	if p.kind != pktData {
		src, dst, key, t[0], t[1] = dst, src, q.revKey, t[1], t[0]
	}
	*v = lb.Packet{Kind: lb.Kind(p.kind), Role: e.role(sw, t[0], t[1]), Priority: p.prio, ECN: p.ecn,
		Last: p.kind == pktData && p.psn == q.npkts-1, Flow: p.qp, Bytes: p.wire, PSN: p.psn, Hash: key,
		Src: src, Dst: dst, SrcToR: int(t[0]), DstToR: int(t[1]), InLink: p.inLink, Hdr: &p.hdr}
	return v
}

// forward picks the next link of packet p at switch sw: its pinned path,
// its only candidate, or the module's (or ECMP's) choice among several;
// then the module sees it (Arriver) and may put it in a reorder queue.
func (e *PacketEngine) forward(sw int32, p *packet) (int32, lb.Queue) {
	if p.route != 0 {
		if li, ok := e.pinnedNext(sw, p); ok {
			return li, e.arrive(sw, p, li)
		}
	}
	var hid int32
	var key uint64
	if p.kind == pktCtl {
		hid, key = e.ctlHops(sw, int32(p.sack)), ctlKey(int32(p.psn), int32(p.sack))
	} else {
		var dsti int32
		key, dsti = e.qf[p.qp].route(p)
		hid = e.cachedHops(sw, e.hostSlot(sw, dsti))
	}
	span := e.hopSpans[hid]
	m := e.mods[sw].m
	var li int32
	switch {
	case span.n == 1:
		li = e.hopFlat[span.off]
	case m == nil || p.kind >= pktCtl: // control and notifications: no module
		li = e.hopFlat[span.off+int32(ecmpPick(key, e.salts[sw], int(span.n)))]
	default:
		c := e.hops[hid]
		e.selecting = true
		i := m.Select(e.sws[sw], e.view(sw, p), c)
		e.selecting = false
		if li, ok := e.pinnedNext(sw, p); ok { // the module pinned a path
			return li, e.arrive(sw, p, li)
		}
		if i < 0 || i >= len(c) {
			// A broken module fails the run, not the emulated lab's process.
			e.failf("fabric: load-balancing module chose link %d of %d at %s", i, len(c), e.sws[sw].name)
			i = 0
		}
		li = c[i].Link
	}
	return li, e.arrive(sw, p, li)
}

// arrive shows a packet to its switch's module once its egress is known
// (small: inlined where the switch has no Arriver).
func (e *PacketEngine) arrive(sw int32, p *packet, li int32) lb.Queue {
	if e.arrives[sw] && p.kind < pktCtl {
		return e.arriveHook(sw, p, li)
	}
	return lb.Normal
}

func (e *PacketEngine) arriveHook(sw int32, p *packet, li int32) lb.Queue {
	e.arriving = true
	q := e.mods[sw].arrive.Arrive(e.sws[sw], e.view(sw, p), e.egress(li))
	e.arriving = false
	return q
}

// dequeued shows a packet leaving a switch port to the switch's module
// (kick calls it only for a switch with a Dequeuer: plink.deqHook).
func (e *PacketEngine) dequeued(li int32, p *packet) {
	sw := e.links[li].sw
	if d := e.mods[sw].deq; d != nil && p.kind < pktCtl {
		// its own view: a packet may leave while a module holds pv (a
		// control packet it sends)
		d.Dequeue(e.sws[sw], e.fill(&e.pvDeq, sw, p), e.egress(li))
	}
}

func (e *PacketEngine) egress(li int32) lb.Egress {
	l := &e.links[li]
	return lb.Egress{Link: li, Port: l.fromPort, Next: l.to}
}

// failf records the first fault of a run: the run ends with it.
func (e *PacketEngine) failf(format string, args ...any) {
	if e.fault == nil {
		e.fault = fmt.Errorf(format, args...)
	}
}

// resetModules tells every module, the hosts' too, a run starts.
func (e *PacketEngine) resetModules() {
	e.observeSchemes() // before the modules restart their counts
	e.resetHosts()
	for i, s := range e.mods {
		if s.reset != nil {
			s.reset.Reset(e.sws[i])
		}
	}
	e.observeSchemes() // and after: a count that restarted reads below its last
}

// A host on a single link is reached through its switch, so away from
// that switch its next hops are the switch's and are computed once for
// all its hosts (the switch's slot in e.cands, which control packets to
// it use too; hostSlot).

// hostSlot is host dsti's slot in switch sw's row of e.cands: its own, or
// away from the switch of a single-homed host that switch's.
func (e *PacketEngine) hostSlot(sw, dsti int32) int32 {
	if a := e.attach[dsti]; a >= 0 && a != sw {
		return int32(len(e.hostID)) + a
	}
	return dsti
}

// cachedHops is the index in e.hops (and e.hopLinks, e.hopSpans) of the
// next hops from switch sw toward the device of slot at of sw's row (a
// host's, then a switch's), computed on first use. Slots with the same
// next hops share one list (at an edge switch every remote host's is its
// uplinks), and each switch keeps only a small index per destination: a
// list per pair put tens of megabytes between the packets and the cache on
// a fabric of a thousand hosts. The built-in ECMP reads a list's links
// from one flat array (hopFlat), a few kilobytes however large the fabric.
func (e *PacketEngine) cachedHops(sw, at int32) int32 {
	row := e.cands[sw]
	if row == nil {
		row = make([]int32, len(e.hostID)+len(e.sws))
		e.cands[sw] = row
	}
	if id := row[at]; id > 0 {
		return id - 1
	}
	links := e.fillHops(sw, at)
	var key []byte
	for _, li := range links {
		key = binary.LittleEndian.AppendUint32(key, uint32(li))
	}
	id, ok := e.hopIDs[string(key)]
	if !ok {
		c := []lb.Egress{}
		span := hopSpan{off: int32(len(e.hopFlat)), n: int32(len(links))}
		for _, li := range links {
			c = append(c, e.egress(int32(li)))
			e.hopFlat = append(e.hopFlat, int32(li))
		}
		e.hops, e.hopLinks, e.hopSpans = append(e.hops, c), append(e.hopLinks, links), append(e.hopSpans, span)
		id = int32(len(e.hops))
		e.hopIDs[string(key)] = id
	}
	row[at] = id
	return id - 1
}

// hopSpan is where a list of next hops lies in e.hopFlat.
type hopSpan struct{ off, n int32 }

// fillHops lists the links from switch sw one hop closer to the device of
// slot at: at the switch of a single-homed host, its links to the host
// (what the topology's distances give, without a search from every host);
// otherwise the topology's next hops.
func (e *PacketEngine) fillHops(sw, at int32) []int {
	if int(at) >= len(e.hostName) {
		return e.topo.nextHops(e.sws[sw].name, e.sws[at-int32(len(e.hostName))].name)
	}
	dst := e.hostName[at]
	if e.attach[at] != sw {
		return e.topo.nextHops(e.sws[sw].name, dst)
	}
	var links []int
	for _, li := range e.topo.out[e.sws[sw].name] {
		if e.topo.links[li].to == dst {
			links = append(links, li)
		}
	}
	return links
}

// route is a flow's ECMP path, Topology.path's, with the next hops at
// switches from the engine's cache and the switches' salts (for the
// configured seed) from their views.
func (e *PacketEngine) route(f Flow) ([]int, error) {
	dsti, ok := e.hostID[f.Dst]
	if !ok {
		return e.topo.path(f, e.cfg.Seed) // it names the error
	}
	hops := func(n, dst string) []int {
		if sw, ok := e.swID[n]; ok {
			return e.hopLinks[e.cachedHops(sw, e.hostSlot(sw, dsti))]
		}
		if id, ok := e.hostID[n]; ok && e.attach[id] >= 0 {
			// A single-homed source's one link, if its switch leads on.
			if sw := e.attach[id]; sw == e.attach[dsti] || len(e.hopLinks[e.cachedHops(sw, e.hostSlot(sw, dsti))]) > 0 {
				return e.topo.out[n]
			}
		}
		return e.topo.nextHops(n, dst)
	}
	salt := func(n string) uint64 {
		if sw, ok := e.swID[n]; ok {
			return e.salts[sw]
		}
		return switchSalt(n, e.cfg.Seed)
	}
	return e.topo.pathVia(f, hops, salt)
}

// egresses lists the links from device n one hop closer to device dst.
func (e *PacketEngine) egresses(n, dst string) []lb.Egress {
	c := []lb.Egress{}
	for _, li := range e.topo.nextHops(n, dst) {
		c = append(c, e.egress(int32(li)))
	}
	return c
}

// qpFwd is what forwarding reads of a QP, in an array of its own: a hop
// reads 24 bytes, not the QP's state spread over several cache lines.
type qpFwd struct {
	fwdKey, revKey uint64 // 5-tuple hashes of the data and the ACK direction
	srcIdx, dstIdx int32  // host indexes of the two ends
}

// dst is the host index packet p of the QP goes to: data to the
// destination, acknowledgements and notifications back to the source.
func (f *qpFwd) dst(p *packet) int32 {
	if p.kind != pktData {
		return f.srcIdx
	}
	return f.dstIdx
}

// route is how a switch forwards packet p of the QP: the hash ECMP picks
// by (the data direction's, or the ACK direction's) and dst. forward
// routes by it and warm foresees forward by it.
func (f *qpFwd) route(p *packet) (key uint64, dst int32) {
	if p.kind != pktData {
		return f.revKey, f.srcIdx
	}
	return dataKey(f.fwdKey, p), f.dstIdx
}
