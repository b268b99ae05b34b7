package fabric

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"unsafe"
)

// The queue must hand events back in (time, scheduling order), as a sort
// would, with pushes interleaved with pops (never before the last popped
// time, as in a simulation), ties, times within one bucket, and times far
// beyond the wheel's horizon; also after a reset.
func TestEventQueueOrdersByTimeThenSchedule(t *testing.T) {
	var q eventQueue
	for round, span := range []int64{100, 1 << maxShift * 3, 1 << (horizonShift + 2), 1 << 40} {
		q.reset()
		r := rand.New(rand.NewSource(int64(round)))
		checkOrder(t, &q, r, fmt.Sprintf("span %d", span), 500, 5000, func(int32) int64 { return span })
	}
}

// The bucket width follows the density: a dense stretch (many events per
// 4.1 ns) narrows the buckets down to the narrowest width, a sparse one
// widens them back, and the order stays (time, scheduling order) across
// every change of width.
func TestEventQueueAdaptsWidthToDensity(t *testing.T) {
	var q eventQueue
	r := rand.New(rand.NewSource(1))
	var narrowest uint8 = maxShift
	const dense = 300_000
	checkOrder(t, &q, r, "dense then sparse", 500, 2*dense, func(id int32) int64 {
		if q.last != nil {
			narrowest = min(narrowest, q.shift)
		}
		if id < dense {
			return 1 << maxShift // 500 events within 4.1 ns of now
		}
		return 1 << 30 // then about one per microsecond
	})
	if narrowest != minShift {
		t.Errorf("the dense stretch narrowed the buckets to 2^%d ps, want 2^%d", narrowest, minShift)
	}
	if q.shift != maxShift {
		t.Errorf("after the sparse stretch the buckets are 2^%d ps wide, want 2^%d", q.shift, maxShift)
	}
	if q.stats.regrids < 2*(maxShift-minShift) {
		t.Errorf("%d changes of width, want at least %d", q.stats.regrids, 2*(maxShift-minShift))
	}
}

// checkOrder pushes first events, then pops every event, pushing up to two
// more (until total) after each pop at times within span(id) of it (one in
// eight at the popped time itself), and compares the pops with a stable
// sort by time of everything pushed.
func checkOrder(t *testing.T, q *eventQueue, r *rand.Rand, name string, first, total int32, span func(id int32) int64) {
	t.Helper()
	var want []event // every event pushed, in push order
	var got []event
	now, id := int64(0), int32(0)
	push := func() {
		tm := now + r.Int63n(span(id))
		if r.Intn(8) == 0 {
			tm = now // same-time events, including into the bucket being consumed
		}
		q.push(event{t: tm, id: id})
		want = append(want, event{t: tm, id: id})
		id++
	}
	for i := int32(0); i < first; i++ {
		push()
	}
	for q.len() > 0 {
		e := q.pop()
		now = e.t
		got = append(got, e)
		for k := r.Intn(3); k > 0 && id < total; k-- {
			push()
		}
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].t < want[j].t })
	if len(got) != len(want) {
		t.Fatalf("%s: popped %d of %d events", name, len(got), len(want))
	}
	for i := range want {
		if got[i].t != want[i].t || got[i].id != want[i].id {
			t.Fatalf("%s: pop %d is (t %d, id %d), want (t %d, id %d)", name, i, got[i].t, got[i].id, want[i].t, want[i].id)
		}
	}
}

func TestEventIs32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(event{}); n != 32 {
		t.Errorf("event is %d bytes; the queue's speed depends on 32", n)
	}
}

func TestPoolReusesPackets(t *testing.T) {
	var p pool
	a := p.get()
	a.psn = 7
	p.put(a)
	if b := p.get(); b != a || b.psn != 0 {
		t.Fatal("pool must hand back the same, zeroed packet")
	}
}

// Once the queue holds its usual number of events, pushing and popping
// allocates nothing: nodes are reused, and memory follows the peak number
// of events queued, not how many pass through.
func TestEventQueueSteadyStateAllocatesNothing(t *testing.T) {
	var q eventQueue
	r := rand.New(rand.NewSource(1))
	step := func() {
		e := q.pop()
		e.t += 1 + r.Int63n(1_000_000) // within 1 us, as link delays and packet times
		q.push(e)
	}
	for i := 0; i < 1000; i++ {
		q.push(event{t: r.Int63n(1_000_000), id: int32(i)})
	}
	for i := 0; i < 200_000; i++ {
		step()
	}
	if n := testing.AllocsPerRun(100_000, step); n != 0 {
		t.Errorf("%.4f allocations per push and pop in steady state, want 0", n)
	}
}
