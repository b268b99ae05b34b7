package fabric

// PFC frames between a switch ingress and the port upstream of it. A
// switch enters XOFF for an ingress priority at its XOFF threshold and
// sends PAUSE with PauseQuanta (512 bit times each at the link's rate); it
// sends PAUSE again every PauseRefresh for as long as it stays in XOFF,
// before the quanta run out, and RESUME (quanta 0) at XON. The upstream
// port stops that priority on PAUSE and starts again on RESUME or when the
// quanta of the last PAUSE have run out. Every frame counts once where it
// is sent (PFCTx) and once where it arrives (PFCRx), PAUSE, refresh and
// RESUME alike, as the IEEE 802.3 PAUSE frame counters do; PauseTxNs is
// the time in XOFF, PauseRxNs the time paused.

// PFC event kinds (event.arg bits 8-15; bits 0-7 are the priority, 16-31
// the frame's quanta or the refresh's XOFF episode).
const (
	pfcFrame   = iota // a PAUSE (quanta > 0) or RESUME frame reaches the upstream port
	pfcRefresh        // the switch's refresh timer for an XOFF episode
	pfcExpire         // the upstream port's pause may have run out
)

func pfcArg(prio uint8, kind, hi uint32) uint32 { return uint32(prio) | kind<<8 | hi<<16 }

// sendPFC starts (on) or ends the XOFF state of priority prio at link li's
// far end: the switch sends PAUSE and arms its refresh, or sends RESUME.
func (e *PacketEngine) sendPFC(li int32, prio uint8, on bool) {
	l := &e.links[li]
	c := &e.swc[l.swTo]
	if !on {
		e.lto[li].pauseTxNs[prio] += float64(e.now-l.xoffAt[prio]) / 1000
		e.pfcFrame(li, prio, 0)
		return
	}
	l.xoffAt[prio] = e.now
	l.xoffGen[prio]++
	e.pfcFrame(li, prio, c.quanta())
	e.armRefresh(li, prio)
}

// pfcFrame puts one PFC frame with the given quanta on the way upstream of
// link li: it arrives one frame time plus the propagation delay later.
func (e *PacketEngine) pfcFrame(li int32, prio uint8, quanta uint16) {
	l := &e.links[li]
	e.lto[li].pfcTx[prio]++
	e.ev.push(event{t: e.now + l.psPer(pauseBytes) + l.delay*1000, key: uint64(evPFC), id: li, arg: pfcArg(prio, pfcFrame, uint32(quanta))})
}

func (e *PacketEngine) armRefresh(li int32, prio uint8) {
	l := &e.links[li]
	at := e.now + int64(e.swc[l.swTo].refreshNs(l.rate)*1000)
	e.ev.push(event{t: at, key: uint64(evPFC), id: li, arg: pfcArg(prio, pfcRefresh, uint32(l.xoffGen[prio]))})
}

func (e *PacketEngine) onPFC(ev event) {
	l := &e.links[ev.id]
	prio, kind, hi := uint8(ev.arg), ev.arg>>8&0xff, ev.arg>>16
	switch kind {
	case pfcRefresh: // at the switch: still in the same XOFF state?
		if l.xoffSent[prio] && uint32(l.xoffGen[prio]) == hi {
			e.pfcFrame(ev.id, prio, e.swc[l.swTo].quanta())
			e.armRefresh(ev.id, prio)
		}
	case pfcFrame: // at the upstream port
		e.lfrom[ev.id].pfcRx[prio]++
		if hi == 0 {
			e.unpause(ev.id, prio)
			return
		}
		if !l.paused[prio] {
			l.paused[prio], l.pauseSince[prio] = true, e.now
		}
		l.pauseUntil[prio] = e.now + int64(pauseNs(uint16(hi), l.rate)*1000)
		e.ev.push(event{t: l.pauseUntil[prio], key: uint64(evPFC), id: ev.id, arg: pfcArg(prio, pfcExpire, 0)})
	case pfcExpire: // a later PAUSE may have pushed the end back
		if e.now >= l.pauseUntil[prio] {
			e.unpause(ev.id, prio)
		}
	}
}

// unpause lets link li's port send priority prio again.
func (e *PacketEngine) unpause(li int32, prio uint8) {
	l := &e.links[li]
	if !l.paused[prio] {
		return
	}
	l.paused[prio] = false
	e.lfrom[li].pauseRxNs[prio] += float64(e.now-l.pauseSince[prio]) / 1000
	e.kick(li)
	e.wake(li)
}
