package fabric

import (
	"encoding/binary"
	"fmt"
)

// Per-hop forwarding of the packet engine: at each switch the packet's
// candidates are the equal-cost next hops toward its destination, and the
// load-balancing module picks one (see lb.go).

type swView struct {
	e    *PacketEngine
	id   int32
	name string
	salt uint64
}

func (v *swView) Name() string                          { return v.name }
func (v *swView) Salt() uint64                          { return v.salt }
func (v *swView) Now() int64                            { return v.e.now / 1000 }
func (v *swView) QueueBytes(link int32, prio int) int64 { return v.e.links[link].q[prio].bytes }
func (v *swView) After(d int64, fn func())              { v.e.later(v.e.now+d*1000, fn) }

func (v *swView) Send(to string, msg any) {
	dst, known := v.e.swID[to]
	if !known {
		return
	}
	r, ok := v.e.lb[dst].(Receiver) // the module the switch at the far end runs
	if !ok {
		return
	}
	hops, ok := v.e.topo.distances(to)[v.name]
	if !ok {
		return
	}
	from := v.name
	v.e.later(v.e.now+int64(hops)*v.e.minDelay*1000, func() { r.Receive(v.e.sws[dst], from, msg) })
}

// later runs fn at time t (ps) as an event.
func (e *PacketEngine) later(t int64, fn func()) {
	var i int32
	if n := len(e.freeFns); n > 0 {
		i, e.freeFns = e.freeFns[n-1], e.freeFns[:n-1]
		e.fns[i] = fn
	} else {
		i = int32(len(e.fns))
		e.fns = append(e.fns, fn)
	}
	e.ev.push(qpEvent(t, evLB, i, 0))
}

func (e *PacketEngine) onLB(ev event) {
	fn := e.fns[ev.id]
	e.fns[ev.id] = nil
	e.freeFns = append(e.freeFns, ev.id)
	fn()
}

// candidates are the links from switch sw one hop closer to host dst
// (index dsti), computed once per switch and destination (hopList).
func (e *PacketEngine) candidates(sw, dsti int32, dst string) []Egress {
	return e.hops[e.hopList(sw, dsti, dst)]
}

// hopList is the index in hops (and hopLinks) of the next hops from switch
// sw toward host dst. Pairs with the same next hops share one list (at an
// edge switch every remote host's is its uplinks), and each switch keeps
// only a small index per destination: a list per pair put tens of megabytes
// between the packets and the cache on a fabric of a thousand hosts. A host
// on a single link is reached through its switch, so away from that switch
// its next hops are the switch's and are computed once for all its hosts.
func (e *PacketEngine) hopList(sw, dsti int32, dst string) int32 {
	row := e.cands[sw]
	if row == nil {
		row = make([]int32, len(e.hostID)+len(e.sws))
		e.cands[sw] = row
	}
	at := dsti
	if a := e.attach[dsti]; a >= 0 && a != sw {
		at = int32(len(e.hostID)) + a
	}
	if id := row[at]; id > 0 {
		return id - 1
	}
	links := e.topo.nextHops(e.sws[sw].name, dst)
	var key []byte
	for _, li := range links {
		key = binary.LittleEndian.AppendUint32(key, uint32(li))
	}
	id, ok := e.hopIDs[string(key)]
	if !ok {
		c := []Egress{}
		for _, li := range links {
			l := e.topo.links[li]
			c = append(c, Egress{Link: int32(li), Port: l.fromPort, Next: l.to})
		}
		e.hops, e.hopLinks = append(e.hops, c), append(e.hopLinks, links)
		id = int32(len(e.hops))
		e.hopIDs[string(key)] = id
	}
	row[at] = id
	return id - 1
}

// route is a flow's ECMP path, Topology.path's, with the next hops at
// switches from the engine's cache and the switches' salts (for the
// configured seed) from salts.
func (e *PacketEngine) route(f Flow, salts []uint64) ([]int, error) {
	dsti, ok := e.hostID[f.Dst]
	if !ok {
		return e.topo.path(f, e.cfg.Seed) // it names the error
	}
	hops := func(n, dst string) []int {
		if sw, ok := e.swID[n]; ok {
			return e.hopLinks[e.hopList(sw, dsti, dst)]
		}
		return e.topo.nextHops(n, dst)
	}
	salt := func(n string) uint64 {
		if sw, ok := e.swID[n]; ok {
			return salts[sw]
		}
		return switchSalt(n, e.cfg.Seed)
	}
	return e.topo.pathVia(f, hops, salt)
}

// forward picks the next link of a packet arriving at switch sw.
func (e *PacketEngine) forward(sw int32, p *packet) int32 {
	q := e.qps[p.qp]
	src, dst, key, dsti := q.flow.Src, q.flow.Dst, q.fwdKey, q.dstIdx
	if p.kind != pktData {
		src, dst, key, dsti = dst, src, q.revKey, q.srcIdx
	}
	c := e.candidates(sw, dsti, dst)
	if len(c) == 1 {
		return c[0].Link
	}
	e.pinfo = PacketInfo{QP: int(p.qp), Src: src, Dst: dst, Hash: key, PSN: p.psn, Data: p.kind == pktData,
		Bytes: int(p.wire), Priority: int(p.prio), Meta: &p.meta}
	i := e.lb[sw].Select(e.sws[sw], &e.pinfo, c)
	if i < 0 || i >= len(c) {
		// A broken module fails the run, not the emulated lab's process.
		if e.fault == nil {
			e.fault = fmt.Errorf("fabric: load-balancing module chose link %d of %d at %s", i, len(c), e.sws[sw].name)
		}
		return c[0].Link
	}
	return c[i].Link
}
