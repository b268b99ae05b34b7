package fabric

import "github.com/labctl/labctl/emulator/fabric/lb"

// Control packets between switches' modules (ConWeave's RTT replies and
// notifications, Gemma's queue reports): pool packets of kind pktCtl that
// leave the sending switch on the control priority, queue and serialise
// like any packet, and are handed to the destination switch's module
// (lb.Receiver). A control packet's psn and sack fields hold the sending
// and the destination switch. Module timers (Schedule) ride in events
// with a pool packet carrying their argument.

// Send implements lb.Switch.
func (v *swView) Send(to int, bytes int, h *lb.Header) bool {
	e := v.e
	if to < 0 || to >= len(e.sws) || int32(to) == v.id {
		return false
	}
	p := e.pool.get()
	p.kind, p.qp, p.prio, p.inLink = pktCtl, -1, ctrlPrio, -1
	p.psn, p.sack = int64(v.id), int64(to)
	p.wire = int32(max(bytes, 64))
	p.hdr = *h
	p.hdr.Flags &^= lb.FlagPinned
	if h.Flags&lb.FlagPinned != 0 && !e.pin(p, v.id, int32(to), int(h.Path)) {
		e.pool.put(p)
		return false
	}
	if e.hopSpans[e.ctlHops(v.id, int32(to))].n == 0 {
		e.pool.put(p)
		return false
	}
	out, _ := e.forward(v.id, p)
	e.enqueue(&e.swc[v.id], v.id, -1, out, p, lb.Normal)
	return true
}

// deliver hands a control packet that reached its destination switch to
// that switch's module, and frees it.
func (e *PacketEngine) deliver(sw int32, p *packet) {
	if r := e.mods[sw].recv; r != nil {
		r.Receive(e.sws[sw], e.view(sw, p))
	}
	e.pool.put(p)
}

// Schedule implements lb.Switch.
func (v *swView) Schedule(d int64, arg int64) {
	p := v.e.pool.get()
	p.psn = arg
	v.e.ev.push(event{t: v.e.now + d*1000, key: uint64(evLBTick), id: v.id, pkt: p})
}

func (e *PacketEngine) onTick(ev event) {
	arg := ev.pkt.psn
	e.pool.put(ev.pkt)
	if ev.id < 0 {
		e.onHostTick(ev.id, arg)
		return
	}
	if t := e.mods[ev.id].tick; t != nil {
		t.Tick(e.sws[ev.id], arg)
	}
}

// After implements lb.Switch.
func (v *swView) After(d int64, fn func()) { v.e.later(v.e.now+d*1000, fn) }

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
