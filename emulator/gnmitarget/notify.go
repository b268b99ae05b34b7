package gnmitarget

import (
	"strconv"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
)

// Why paths are built once: the twin publishes every port of every switch
// at every sample interval of simulated time (a 128-host fat-tree: 640
// ports, some 30 samples a point), and each sample's notifications had
// every prefix and leaf path built afresh, the PFC leaf names formatted
// with fmt. A port's prefixes and the leaf paths never change, so each
// target builds them once and every sample's notifications point to them;
// only the values are new. The shared paths are never written after they
// are built (the cache, the subscribe server and gRPC only read them; the
// subscribe server clones a notification before it marks duplicates).

// A COUNTERS_DB key (a port's PFC counters, a queue's occupancy) goes as
// sonic-gnmi sends a table key: one update whose value is a JSON_IETF
// object of counter names to values as strings. One update per counter
// (two dozen for a port's PFC table) had each matched against the
// subscriptions and decoded on its own: half the cost of the telemetry
// of an emulated point.

// leaves are the leaf paths of the notifications, in the order of their
// values, the COUNTERS_DB tables' counter names, and the idle mark; one
// set per target.
type leaves struct {
	counters [6]*pb.Path // interface counters
	pfc      [24]string  // COUNTERS_DB per priority: rx, tx, pause duration
	queue    [5]*pb.Path // OpenConfig queue state
	queueDB  [2]string   // COUNTERS_DB queue occupancy and watermark
	idle     *pb.Update  // the idle mark, the same value every time
}

func newLeaves() *leaves {
	l := &leaves{}
	for i, n := range []string{"in-octets", "out-octets", "in-pkts", "out-pkts", "in-discards", "out-discards"} {
		l.counters[i] = leafPath(n)
	}
	for p := 0; p < 8; p++ {
		l.pfc[3*p] = collectors.PrioName(collectors.SAIPFCRxPkts, p)
		l.pfc[3*p+1] = collectors.PrioName(collectors.SAIPFCTxPkts, p)
		l.pfc[3*p+2] = collectors.PrioName(collectors.SAIPFCPauseUs, p)
	}
	for i, n := range []string{"transmit-pkts", "transmit-octets", "dropped-pkts", "max-queue-len", "ecn-marked-pkts"} {
		l.queue[i] = leafPath(n)
	}
	l.queueDB[0] = collectors.SAIQueueOccupancy
	l.queueDB[1] = collectors.SAIQueueWatermark
	l.idle = &pb.Update{Path: leafPath(collectors.IdleLeaf), Val: &pb.TypedValue{Value: &pb.TypedValue_BoolVal{BoolVal: true}}}
	return l
}

func leafPath(name string) *pb.Path { return &pb.Path{Elem: []*pb.PathElem{{Name: name}}} }

// portPrefixes are one port's notification prefixes.
type portPrefixes struct {
	counters, pfc *pb.Path
	queue         [8]*pb.Path // OpenConfig, per queue; nil until used
	queueDB       [8]*pb.Path // COUNTERS_DB, per queue; nil until used
}

func elem(name string, keys ...string) *pb.PathElem {
	e := &pb.PathElem{Name: name}
	if len(keys) == 2 {
		e.Key = map[string]string{keys[0]: keys[1]}
	}
	return e
}

func newPortPrefixes(sw, port string) *portPrefixes {
	return &portPrefixes{
		counters: &pb.Path{Target: sw, Elem: []*pb.PathElem{elem("interfaces"), elem("interface", "name", port), elem("state"), elem("counters")}},
		pfc:      &pb.Path{Target: CountersDB, Elem: []*pb.PathElem{elem("COUNTERS"), elem(port)}},
	}
}

// queuePrefixes returns queue q's prefixes, and whether they are new.
func (pp *portPrefixes) queuePrefixes(sw, port string, q int) (oc, db *pb.Path, fresh bool) {
	if fresh = pp.queue[q] == nil; fresh {
		qs := strconv.Itoa(q)
		pp.queue[q] = &pb.Path{Target: sw, Elem: []*pb.PathElem{elem("qos"), elem("interfaces"), elem("interface", "interface-id", port),
			elem("output"), elem("queues"), elem("queue", "name", qs), elem("state")}}
		pp.queueDB[q] = &pb.Path{Target: CountersDB, Elem: []*pb.PathElem{elem("COUNTERS"), elem(port + ":" + qs)}}
	}
	return pp.queue[q], pp.queueDB[q], fresh
}

// values allocates a notification's updates and their values together
// (a few allocations per notification, not three per value).
type values struct {
	ups  []pb.Update
	tvs  []pb.TypedValue
	ptrs []*pb.Update
}

func newValues(n int, idle *pb.Update) *values {
	v := &values{ups: make([]pb.Update, n), tvs: make([]pb.TypedValue, n), ptrs: make([]*pb.Update, n, n+1)}
	for i := range v.ups {
		v.ups[i].Val = &v.tvs[i]
		v.ptrs[i] = &v.ups[i]
	}
	if idle != nil {
		v.ptrs = append(v.ptrs, idle)
	}
	return v
}

func (v *values) uints(paths []*pb.Path, xs ...uint64) []*pb.Update {
	ws := make([]pb.TypedValue_UintVal, len(xs))
	for i, x := range xs {
		v.ups[i].Path = paths[i]
		ws[i].UintVal = x
		v.tvs[i].Value = &ws[i]
	}
	return v.ptrs
}

// table sets the one update of a COUNTERS_DB key sent whole: no path
// (the key is the prefix), a JSON_IETF object of names[i] to xs[i] as
// strings, as sonic-gnmi writes them; the value at index na (if any) is
// "N/A" instead (GarbleFor).
func (v *values) table(names []string, na int, xs ...uint64) []*pb.Update {
	n := 2
	for _, name := range names {
		n += len(name) + 6 + 20
	}
	b := append(make([]byte, 0, n), '{')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, names[i]...)
		b = append(b, '"', ':', '"')
		if i == na {
			b = append(b, "N/A"...)
		} else {
			b = strconv.AppendUint(b, x, 10)
		}
		b = append(b, '"')
	}
	b = append(b, '}')
	v.tvs[0].Value = &pb.TypedValue_JsonIetfVal{JsonIetfVal: b}
	return v.ptrs
}

// notifications maps one port's counters to gNMI: each group is one atomic
// notification, stored and delivered as a unit. With idle, each carries
// the idle mark last.
func (t *Target) notifications(ts int64, port string, c *fabric.PortCounters, idle bool) []*pb.Notification {
	pp := t.ports[port]
	if pp == nil {
		pp = newPortPrefixes(t.name, port)
		t.ports[port] = pp
		t.addPrefixes(pp.counters, pp.pfc)
	}
	var mark *pb.Update
	if idle {
		mark = t.leaves.idle
	}
	l := t.leaves
	out := []*pb.Notification{{
		Timestamp: ts, Atomic: true, Prefix: pp.counters,
		Update: newValues(6, mark).uints(l.counters[:], c.RxBytes, c.TxBytes, c.RxPkts, c.TxPkts, 0, c.Drops),
	}}
	var pfc [24]uint64
	for p := 0; p < 8; p++ {
		pfc[3*p], pfc[3*p+1], pfc[3*p+2] = c.PFCRx[p], c.PFCTx[p], c.PauseRxNs[p]/1000
	}
	na := -1
	if t.garbling {
		na = 3 * garbledPrio // its rx count
	}
	out = append(out, &pb.Notification{Timestamp: ts, Atomic: true, Prefix: pp.pfc, Update: newValues(1, mark).table(l.pfc[:], na, pfc[:]...)})
	for q, qc := range c.Queues {
		// the lossless queue always; others when they carried traffic
		// since the watermarks were last cleared (the point's start)
		if q != 3 && qc.TxPkts == qc.ClearedTxPkts && qc.WatermarkBytes == 0 {
			continue
		}
		oc, db, fresh := pp.queuePrefixes(t.name, port, q)
		if fresh {
			t.addPrefixes(oc, db)
		}
		out = append(out, &pb.Notification{Timestamp: ts, Atomic: true, Prefix: oc,
			Update: newValues(5, mark).uints(l.queue[:], qc.TxPkts, qc.TxBytes, qc.Drops, qc.WatermarkBytes, qc.ECNMarked),
		}, &pb.Notification{Timestamp: ts, Atomic: true, Prefix: db,
			Update: newValues(1, mark).table(l.queueDB[:], -1, qc.DepthBytes, qc.WatermarkBytes),
		})
	}
	return out
}
