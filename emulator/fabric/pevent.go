package fabric

// The packet engine's event queue: a 4-ary min-heap of value events
// ordered by (time, sequence), so that equal times run in scheduling order
// and a run is deterministic. Events are values: no allocation per event;
// four children per node halve the depth of a binary heap, which is where
// a large simulation spends its time.

type evKind uint8

const (
	evTxDone  evKind = iota // a port finished serialising a packet
	evArrive                // a packet reaches the far end of a link
	evPFC                   // a PAUSE/RESUME frame reaches the far end
	evQPSend                // a QP's pacing timer fired
	evQPStart               // a flow becomes eligible to start
	evRTO                   // a QP's retransmission timer
	evDCQCN                 // a QP's DCQCN alpha/rate-increase timer
	evSample                // a telemetry sample instant
	evLB                    // a load-balancing module timer or message
)

type event struct {
	t    int64 // ps
	seq  uint64
	kind evKind
	link int32 // directed link (TxDone, Arrive, PFC)
	qp   int32 // QP index (QP events)
	prio uint8 // PFC priority
	on   bool  // PFC: pause (true) or resume
	gen  uint32
	pkt  *packet
}

type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
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

func before(a, b *event) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

func (q *eventQueue) pop() event {
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

func (q *eventQueue) len() int { return len(q.h) }

// Packets.

type pktKind uint8

const (
	pktData pktKind = iota
	pktAck
	pktNack
	pktCNP
)

type packet struct {
	kind    pktKind
	qp      int32
	psn     int64 // data: sequence number; ack/nack: the PSN acknowledged / expected
	sack    int64 // IRN NACK: the out-of-order PSN that arrived
	payload int32
	wire    int32 // bytes on the wire incl. headers
	prio    uint8
	ecn     bool     // CE mark
	meta    [4]int64 // per-packet state of the load-balancing module
	inLink  int32    // link it arrived on at the current switch (PFC accounting)
	next    *packet
}

// pool recycles packets: no heap allocation per packet in steady state.
type pool struct{ free *packet }

func (p *pool) get() *packet {
	if k := p.free; k != nil {
		p.free = k.next
		*k = packet{}
		return k
	}
	return &packet{}
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
