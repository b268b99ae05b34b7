package fabric

import (
	"math/bits"
	"slices"
	"sort"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// The packet engine's event queue: a calendar queue (timing wheel) of value
// events ordered by (time, sequence), so that equal times run in scheduling
// order and a run is deterministic. Almost every event of a packet
// simulation lands within a few microseconds of now (a packet time, a link
// delay, a pacing gap), so the wheel covers 2^horizonShift ps (4.2 us) in
// buckets of 2^shift ps: a push puts an event in its bucket, and a bucket is
// sorted once when the clock reaches it. Events beyond the wheel (RTOs,
// DCQCN recovery timers, future flow starts) wait in a 4-ary heap and move
// into the wheel as it turns. Events are values: no allocation per event.
//
// The bucket width follows the event density, as in Brown's calendar queue
// (1988): a fabric of 1,024 hosts puts some 80 events into each 4.1 ns
// bucket where 16 hosts put 2, and the insertion sort of a bucket costs
// about a quarter of its length per event. Over each window of events the
// queue counts the sort's moves; more than one per event halves the width
// (doubling the buckets, same horizon), and fewer than two events per
// bucket with few moves doubles it back. The order events come out in does
// not depend on the width, so a run's results do not either.

type evKind uint8

const (
	evTxDone    evKind = iota // a port finished serialising a packet
	evArrive                  // a packet reaches the far end of a link
	evPFC                     // a PAUSE/RESUME frame reaches the far end
	evQPSend                  // a QP's pacing timer fired
	evQPStart                 // a flow becomes eligible to start
	evRTO                     // a QP's retransmission timer
	evDCQCN                   // a QP's DCQCN alpha/rate-increase timer
	evSample                  // a telemetry sample instant
	evLB                      // a load-balancing module timer or message
	evLBTick                  // a load-balancing module's Schedule timer
	evRQTimeout               // a paused reorder queue's timeout
)

// event is 32 bytes: the queue moves millions of them.
type event struct {
	t   int64  // ps
	key uint64 // scheduling order << 8 | kind: unique, so (t, key) orders by (t, order)
	pkt *packet
	id  int32  // directed link (TxDone, Arrive, PFC), QP index (QP events) or LB callback
	arg uint32 // QPSend: generation; PFC: priority | 1<<8 for PAUSE; DCQCN: timer kind
}

func (e *event) kind() evKind { return evKind(e.key) }

func linkEvent(t int64, k evKind, li int32, p *packet) event {
	return event{t: t, key: uint64(k), id: li, pkt: p}
}

func qpEvent(t int64, k evKind, qp int32, arg uint32) event {
	return event{t: t, key: uint64(k), id: qp, arg: arg}
}

func before(a, b *event) bool { return a.t < b.t || a.t == b.t && a.key < b.key }

const (
	horizonShift  = 22      // the wheel covers 2^22 ps = 4.2 us
	maxShift      = 12      // widest bucket: 2^12 ps = 4.1 ns (1,024 buckets)
	minShift      = 6       // narrowest: 64 ps (65,536 buckets)
	densityWindow = 1 << 15 // events sorted between two looks at the density
)

// eventQueue keeps the events of the buckets ahead in one pool of nodes,
// each bucket a list of them; a node freed when its bucket comes up is the
// next one a push takes, so the queue's memory stays as small as the events
// queued (a bucket array of its own per bucket would cycle through memory
// as large as the events of a whole turn of the wheel, out of the cache on
// large fabrics).
type eventQueue struct {
	seq   uint64
	n     int
	shift uint8    // bucket width 2^shift ps
	mask  int64    // buckets - 1 (2^(horizonShift-shift) buckets)
	cur   int64    // absolute bucket being consumed (time >> shift)
	head  int      // next event of the current bucket
	now   []event  // the current bucket, sorted
	last  []int32  // per bucket (absolute bucket & mask): its last pushed node, -1: none
	used  []uint64 // bit per bucket: holds events
	nodes []event  // the events of the buckets ahead of the current one
	link  []int32  // per node: the node pushed before it into its bucket, or the next free one
	free  int32    // first free node, -1: none
	far   heap4    // events in buckets at or beyond cur+mask+1
	win   density  // since the last look at the density
	stats queueStats
	spare []event // regrid's scratch
	soon  soon    // the next non-empty buckets, for prefetching (pwarm.go)
}

// density is what the queue counts over a window: buckets sorted, the
// events in them and the insertion sort's moves.
type density struct{ buckets, events, moves uint64 }

// queueStats describe a queue's work over its life (benchmarks report them).
type queueStats struct {
	density
	regrids uint64
}

func (q *eventQueue) len() int { return q.n }

// init makes the widest wheel; the density narrows it if need be.
func (q *eventQueue) init() {
	q.grid(maxShift)
	q.cur, q.free = -1, -1
}

// grid makes empty buckets of width 2^shift ps.
func (q *eventQueue) grid(shift uint8) {
	n := 1 << (horizonShift - shift)
	q.shift, q.mask = shift, int64(n-1)
	q.last, q.used = make([]int32, n), make([]uint64, n/64)
	for i := range q.last {
		q.last[i] = -1
	}
}

// reset empties the queue for a new run (time starting again at 0),
// keeping its memory and width.
func (q *eventQueue) reset() {
	if q.last == nil {
		q.init()
	}
	for i := range q.last {
		q.last[i] = -1
	}
	clear(q.used)
	q.free = -1
	for i := len(q.link) - 1; i >= 0; i-- {
		q.link[i], q.free = q.free, int32(i)
	}
	q.far.h, q.now = q.far.h[:0], q.now[:0]
	q.seq, q.n, q.cur, q.head = 0, 0, -1, 0
	q.win, q.stats = density{}, queueStats{}
	q.soon = soon{}
}

func (q *eventQueue) push(e event) {
	if q.last == nil {
		q.init()
	}
	q.seq++
	e.key = q.seq<<8 | e.key&0xff
	q.n++
	switch b := e.t >> q.shift; {
	case b <= q.cur:
		q.insertCurrent(e)
	case b <= q.cur+q.mask:
		q.place(e)
	default:
		q.far.push(e)
	}
}

// pop removes the earliest event; the queue must not be empty.
func (q *eventQueue) pop() event {
	if q.head == len(q.now) {
		q.advance()
	}
	e := q.now[q.head]
	q.head++
	q.n--
	return e
}

// ahead is the event k places after the next one if the current bucket
// holds it, else nil.
func (q *eventQueue) ahead(k int) *event {
	if i := q.head + k; i < len(q.now) {
		return &q.now[i]
	}
	return nil
}

// place queues e in its bucket ahead of the current one.
func (q *eventQueue) place(e event) {
	slot := e.t >> q.shift & q.mask
	n := q.free
	if n < 0 {
		n = q.grow()
	}
	q.free = q.link[n]
	q.nodes[n], q.link[n] = e, q.last[slot]
	q.last[slot] = n
	q.used[slot>>6] |= 1 << (slot & 63)
}

// grow adds free nodes (doubling): allocations follow the peak number of
// events queued, not their count.
func (q *eventQueue) grow() int32 {
	old := len(q.nodes)
	add := max(1024, old)
	q.nodes = append(q.nodes, make([]event, add)...)
	q.link = append(q.link, make([]int32, add)...)
	for i := old + add - 1; i >= old; i-- {
		q.link[i], q.free = q.free, int32(i)
	}
	return q.free
}

// take appends the events of bucket slot to s in the order they were
// pushed, freeing their nodes, and empties the bucket.
func (q *eventQueue) take(s []event, slot int64) []event {
	from := len(s)
	for n := q.last[slot]; n >= 0; {
		s = append(s, q.nodes[n])
		next := q.link[n]
		q.link[n], q.free = q.free, n
		n = next
	}
	q.last[slot] = -1
	q.used[slot>>6] &^= 1 << (slot & 63)
	slices.Reverse(s[from:])
	return s
}

// insertCurrent puts e among the not yet consumed events of the current
// bucket, after every event of the same time (it was scheduled last).
func (q *eventQueue) insertCurrent(e event) {
	rest := q.now[q.head:]
	i := q.head + sort.Search(len(rest), func(k int) bool { return rest[k].t > e.t })
	q.now = append(q.now, event{})
	copy(q.now[i+1:], q.now[i:])
	q.now[i] = e
}

// advance moves to the next non-empty bucket, bringing the far events that
// it puts within the wheel's horizon, and sorts that bucket. Between two
// buckets (the current one consumed) is when the width may change.
func (q *eventQueue) advance() {
	q.head = 0
	if q.win.events >= densityWindow {
		q.adapt()
	}
	next, ok := q.nextUsed()
	if !ok {
		next = q.far.h[0].t >> q.shift
	}
	q.cur = next
	q.pull()
	q.now = q.take(q.now[:0], next&q.mask)
	q.win.buckets++
	q.win.events += uint64(len(q.now))
	q.win.moves += sortEvents(q.now)
	q.soon.fresh = true
}

// pull moves the far events within the wheel's horizon into it.
func (q *eventQueue) pull() {
	for len(q.far.h) > 0 && q.far.h[0].t>>q.shift <= q.cur+q.mask {
		q.place(q.far.pop())
	}
}

// adapt ends a window: it narrows the buckets when sorting them moved
// events more than once per event, and widens them when they held fewer
// than two events on average and sorting hardly moved any.
func (q *eventQueue) adapt() {
	w := q.win
	q.stats.buckets += w.buckets
	q.stats.events += w.events
	q.stats.moves += w.moves
	q.win = density{}
	switch {
	case w.moves > w.events && q.shift > minShift:
		q.regrid(q.shift - 1)
	case w.events < 2*w.buckets && 4*w.moves < w.events && q.shift < maxShift:
		q.regrid(q.shift + 1)
	}
}

// regrid changes the bucket width to 2^shift ps, keeping the horizon; the
// current bucket must be consumed. Every queued event keeps its time and
// sequence, so the order they come out in does not change.
func (q *eventQueue) regrid(shift uint8) {
	all := q.spare[:0]
	for w, m := range q.used {
		for ; m != 0; m &= m - 1 {
			all = q.take(all, int64(w<<6|bits.TrailingZeros64(m)))
		}
	}
	from := (q.cur + 1) << q.shift // no queued event is earlier
	q.grid(shift)
	q.cur = from>>shift - 1
	for _, e := range all {
		if e.t>>shift <= q.cur+q.mask {
			q.place(e)
		} else {
			q.far.push(e)
		}
	}
	clear(all)
	q.spare = all[:0]
	q.pull()
	q.stats.regrids++
	q.soon = soon{} // other buckets
}

// nextUsed is the nearest non-empty bucket after the current one.
func (q *eventQueue) nextUsed() (int64, bool) { return q.nextUsedAfter(q.cur) }

// nextUsedAfter is the nearest non-empty bucket after bucket after (at or
// after the current one), within the wheel's horizon.
func (q *eventQueue) nextUsedAfter(after int64) (int64, bool) {
	start := int((after + 1) & q.mask)
	w := start >> 6
	m := q.used[w] &^ (1<<(start&63) - 1)
	for i := 0; i <= len(q.used); i++ {
		if m != 0 {
			slot := w<<6 | bits.TrailingZeros64(m)
			b := after + 1 + int64((slot-start))&q.mask
			return b, b <= q.cur+q.mask
		}
		w = (w + 1) % len(q.used)
		m = q.used[w]
	}
	return 0, false
}

// sortEvents is an insertion sort by (time, sequence), returning how many
// events it moved by one place: the queue keeps buckets short.
func sortEvents(s []event) (moves uint64) {
	for i := 1; i < len(s); i++ {
		if !before(&s[i], &s[i-1]) {
			continue
		}
		e := s[i]
		j := i
		for ; j > 0 && before(&e, &s[j-1]); j-- {
			s[j] = s[j-1]
		}
		s[j] = e
		moves += uint64(i - j)
	}
	return moves
}

// heap4 is a 4-ary min-heap of events by (time, sequence).
type heap4 struct{ h []event }

func (q *heap4) push(e event) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *heap4) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h[n] = event{}
	q.h = h[:n]
	h = q.h
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if before(&h[k], &h[m]) {
				m = k
			}
		}
		if !before(&h[m], &last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = last
	}
	return top
}

// Packets.

type pktKind uint8

const (
	pktData pktKind = iota
	pktAck
	pktNack
	pktCNP
	pktCtl // a switch-to-switch control packet (pcontrol.go)
)

type packet struct {
	// what a hop reads, in the first 64 bytes
	kind    pktKind
	prio    uint8 // priority (= traffic class) at the current hop
	ecn     bool  // CE mark
	notECT  bool  // data of a flow whose ToS is not ECN-capable
	qp      int32
	payload int32
	wire    int32  // bytes on the wire incl. headers
	inLink  int32  // link it arrived on at the current switch (PFC accounting)
	route   int32  // pinned path: index+1 in PacketEngine.routes; 0: none
	hop     uint8  // next link of the pinned path
	sport   uint16 // data: the UDP source port a host module gave it (0: its QP's own)
	psn     int64  // data: sequence number; ack/nack: the PSN acknowledged / expected
	sack    int64  // IRN NACK: the out-of-order PSN that arrived
	next    *packet
	hdr     lb.Header // the load-balancing modules' header
	_       [8]byte   // 128 bytes: a slab's packets start on cache lines
}

// pool recycles packets: no heap allocation per packet in steady state.
type pool struct{ free *packet }

func (p *pool) get() *packet {
	if p.free == nil { // grow by a slab: allocations follow the peak, not the count
		slab := make([]packet, 256)
		for i := range slab {
			p.put(&slab[i])
		}
	}
	k := p.free
	p.free = k.next
	*k = packet{}
	return k
}

func (p *pool) put(k *packet) {
	k.next = p.free
	p.free = k
}

// fifo is a packet queue with a byte count, 48 bytes so that a link's
// queues each sit in one cache line (plink).
type fifo struct {
	head, tail *packet
	bytes      int64
	n          int
	in         int64 // bytes ever pushed (a module's rate of growth)
	_          int64
}

func (f *fifo) push(p *packet) {
	p.next = nil
	if f.tail == nil {
		f.head = p
	} else {
		f.tail.next = p
	}
	f.tail = p
	f.bytes += int64(p.wire)
	f.in += int64(p.wire)
	f.n++
}

func (f *fifo) pop() *packet {
	p := f.head
	if p == nil {
		return nil
	}
	f.head = p.next
	if f.head == nil {
		f.tail = nil
	}
	p.next = nil
	f.bytes -= int64(p.wire)
	f.n--
	return p
}
