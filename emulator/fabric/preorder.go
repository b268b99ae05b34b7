package fabric

import "github.com/labctl/labctl/emulator/fabric/lb"

// Reorder queues (destination ToR): not yet; every allocation fails, so
// modules fall back.

// ReorderStats count the reorder queues' use over the engine's life.
type ReorderStats struct {
	InUse, MaxInUse int   // queues allocated now, and at most at once
	Allocs          int64 // successful allocations
	Exhausted       int64 // allocations refused: the port had none left
	Timeouts        int64 // paused queues resumed by their timeout
	Fallbacks       int64 // modules' fallbacks (lb.Switch.Fallback)
}

// ReorderStats are the reorder queues' counters.
func (e *PacketEngine) ReorderStats() ReorderStats { return e.rqStats }

func (v *swView) AllocQueue(link int32, prio int) (lb.Queue, bool) {
	v.e.rqStats.Exhausted++
	return lb.Normal, false
}
func (v *swView) Pause(q lb.Queue, timeout int64)          {}
func (v *swView) Resume(q lb.Queue)                        {}
func (v *swView) FreeQueue(q lb.Queue)                     {}
func (v *swView) QueueHeld(q lb.Queue) (pkts int, b int64) { return 0, 0 }
func (v *swView) Fallback()                                { v.e.rqStats.Fallbacks++ }

// hold puts p into reorder queue rq of link out; false: p goes to the
// port's own queue.
func (e *PacketEngine) hold(out int32, p *packet, rq lb.Queue) bool { return false }

// popNext takes the next packet of priority prio from link l.
func (e *PacketEngine) popNext(l *plink, prio int) *packet { return l.q[prio].pop() }

func (e *PacketEngine) onRQTimeout(ev event) {}
