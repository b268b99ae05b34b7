package fabric

import (
	"math/bits"
	"sort"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// The packet engine's event queue: a calendar queue (timing wheel) of value
// events ordered by (time, sequence), so that equal times run in scheduling
// order and a run is deterministic. Almost every event of a packet
// simulation lands within a few microseconds of now (a packet time, a link
// delay, a pacing gap), so the wheel covers wheelSize buckets of
// 2^wheelShift ps each: a push appends to its bucket, and a bucket is
// sorted once when the clock reaches it. Events beyond the wheel (RTOs,
// DCQCN recovery timers, future flow starts) wait in a 4-ary heap and move
// into the wheel as it turns. Events are values: no allocation per event.

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
	wheelShift = 12 // bucket width 2^12 ps = 4.1 ns
	wheelBits  = 10 // 1024 buckets: a horizon of 4.2 us
	wheelSize  = 1 << wheelBits
	wheelMask  = wheelSize - 1
)

type eventQueue struct {
	seq  uint64
	n    int
	cur  int64     // absolute bucket being consumed (time >> wheelShift)
	head int       // next event of the current bucket
	bkt  [][]event // wheelSize buckets, indexed by absolute bucket & wheelMask
	used [wheelSize / 64]uint64
	far  heap4 // events in buckets at or beyond cur+wheelSize
}

func (q *eventQueue) len() int { return q.n }

// init makes the buckets, carved from one array (a bucket that outgrows
// its share moves out on its own).
func (q *eventQueue) init() {
	const per = 8
	all := make([]event, wheelSize*per)
	q.bkt, q.cur = make([][]event, wheelSize), -1
	for i := range q.bkt {
		q.bkt[i] = all[i*per : i*per : (i+1)*per]
	}
}

// reset empties the queue for a new run (time starting again at 0),
// keeping the buckets' memory.
func (q *eventQueue) reset() {
	for i := range q.bkt {
		q.bkt[i] = q.bkt[i][:0]
	}
	clear(q.used[:])
	q.far.h = q.far.h[:0]
	q.seq, q.n, q.cur, q.head = 0, 0, -1, 0
}

func (q *eventQueue) push(e event) {
	if q.bkt == nil {
		q.init()
	}
	q.seq++
	e.key = q.seq<<8 | e.key&0xff
	q.n++
	switch b := e.t >> wheelShift; {
	case b <= q.cur:
		q.insertCurrent(e)
	case b < q.cur+wheelSize:
		q.place(e)
	default:
		q.far.push(e)
	}
}

// pop removes the earliest event; the queue must not be empty.
func (q *eventQueue) pop() event {
	if q.head == len(q.bkt[q.cur&wheelMask]) {
		q.advance()
	}
	b := q.bkt[q.cur&wheelMask]
	e := b[q.head]
	b[q.head].pkt = nil
	q.head++
	q.n--
	return e
}

func (q *eventQueue) place(e event) {
	slot := e.t >> wheelShift & wheelMask
	q.bkt[slot] = append(q.bkt[slot], e)
	q.used[slot>>6] |= 1 << (slot & 63)
}

// insertCurrent puts e among the not yet consumed events of the current
// bucket, after every event of the same time (it was scheduled last).
func (q *eventQueue) insertCurrent(e event) {
	slot := q.cur & wheelMask
	s := q.bkt[slot]
	rest := s[q.head:]
	i := q.head + sort.Search(len(rest), func(k int) bool { return rest[k].t > e.t })
	s = append(s, event{})
	copy(s[i+1:], s[i:])
	s[i] = e
	q.bkt[slot] = s
	q.used[slot>>6] |= 1 << (slot & 63)
}

// advance moves to the next non-empty bucket, bringing the far events that
// it puts within the wheel's horizon, and sorts that bucket.
func (q *eventQueue) advance() {
	slot := q.cur & wheelMask
	q.bkt[slot] = q.bkt[slot][:0]
	q.used[slot>>6] &^= 1 << (slot & 63)
	q.head = 0
	next, ok := q.nextUsed()
	if !ok {
		next = q.far.h[0].t >> wheelShift
	}
	q.cur = next
	for len(q.far.h) > 0 && q.far.h[0].t>>wheelShift < next+wheelSize {
		q.place(q.far.pop())
	}
	sortEvents(q.bkt[next&wheelMask])
}

// nextUsed is the nearest non-empty bucket after the current one.
func (q *eventQueue) nextUsed() (int64, bool) {
	start := int((q.cur + 1) & wheelMask)
	w := start >> 6
	m := q.used[w] &^ (1<<(start&63) - 1)
	for i := 0; i <= len(q.used); i++ {
		if m != 0 {
			slot := w<<6 | bits.TrailingZeros64(m)
			return q.cur + 1 + int64((slot-start)&wheelMask), true
		}
		w = (w + 1) % len(q.used)
		m = q.used[w]
	}
	return 0, false
}

// sortEvents is an insertion sort by (time, sequence): buckets are short.
func sortEvents(s []event) {
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
	}
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
	kind    pktKind
	qp      int32
	psn     int64 // data: sequence number; ack/nack: the PSN acknowledged / expected
	sack    int64 // IRN NACK: the out-of-order PSN that arrived
	payload int32
	wire    int32 // bytes on the wire incl. headers
	prio    uint8 // priority (= traffic class) at the current hop
	ecn     bool  // CE mark
	notECT  bool  // data of a flow whose ToS is not ECN-capable
	inLink  int32 // link it arrived on at the current switch (PFC accounting)
	next    *packet
	hdr     lb.Header // the load-balancing modules' header
	route   int32     // pinned path: index+1 in PacketEngine.routes; 0: none
	hop     uint8     // next link of the pinned path
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

// fifo is a packet queue with a byte count.
type fifo struct {
	head, tail *packet
	bytes      int64
	n          int
	in         int64 // bytes ever pushed (a module's rate of growth)
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
