package fabric

// flowLink is a directed link's state in the flow engine, in two cache
// lines: what a recompute reads and writes of every link it visits, then
// the first flows crossing it. A recompute at 1,024 hosts visits some
// 4,000 links and 1,400 flows; with a link's state spread over its own
// struct, its queue's, four per-link arrays and a list of flows of its own
// (some five lines), it did not stay in a core's L2 from one recompute to
// the next. The queue's other counters (linkQueue) are read only where
// the queue holds bytes or pauses (queue.go).
type flowLink struct {
	rsum, off float64 // bits/ns sent (its flows' rates summed), offered to its egress queue (queue.go)
	left      float64 // the fill's: capacity its fixed flows left
	last      int64   // counters and queue are settled up to this time
	txB, txP  float64 // bytes and packets sent since the ports last had them (flushCounts)
	users     int32   // the fill's: flows not fixed yet
	n         int32   // flows crossing it
	seeded    uint32  // round in which it is seeded (the coming one), | linkQueued
	visited   uint32  // round in which a recompute visited it, | linkSettled
	refs      [inlineRefs]flowRef
	more      int32 // 1 + index in FlowEngine.spill of its flows from the inlineRefs-th on; 0: none
	_         int32
}

// inlineRefs is how many of a link's flows its own lines hold.
const inlineRefs = 7

// Flags in the rounds' top bits: a run has at most a recompute per
// arrival and per completion, far fewer than 2^31.
const (
	linkQueued  = 1 << 31 // seeded: its egress queue holds bytes or pauses (linkQueue has them)
	linkSettled = 1 << 31 // visited: its sums change in this round's apply
	roundMask   = 1<<31 - 1
)

func (l *flowLink) isSeeded(r uint32) bool  { return l.seeded&roundMask == r }
func (l *flowLink) isVisited(r uint32) bool { return l.visited&roundMask == r }
func (l *flowLink) queued() bool            { return l.seeded&linkQueued != 0 }

func (l *flowLink) setQueued(on bool) {
	if on {
		l.seeded |= linkQueued
	} else {
		l.seeded &^= linkQueued
	}
}

// ref is the i-th flow crossing l.
func (e *FlowEngine) ref(l *flowLink, i int32) *flowRef {
	if i < inlineRefs {
		return &l.refs[i]
	}
	return &e.spill[l.more-1][i-inlineRefs]
}

// addRef appends a flow to l's.
func (e *FlowEngine) addRef(l *flowLink, r flowRef) {
	if l.n < inlineRefs {
		l.refs[l.n] = r
	} else {
		if l.more == 0 {
			e.spill = append(e.spill, nil)
			l.more = int32(len(e.spill))
		}
		e.spill[l.more-1] = append(e.spill[l.more-1][:l.n-inlineRefs], r)
	}
	l.n++
}
