package fabric

import (
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
	for round, span := range []int64{100, 1 << wheelShift * 3, 1 << (wheelShift + wheelBits + 2), 1 << 40} {
		q.reset()
		r := rand.New(rand.NewSource(int64(round)))
		var want []event // every event pushed, in push order
		var got []event
		now, id := int64(0), int32(0)
		push := func() {
			tm := now + r.Int63n(span)
			if r.Intn(8) == 0 {
				tm = now // same-time events, including into the bucket being consumed
			}
			q.push(event{t: tm, id: id})
			want = append(want, event{t: tm, id: id})
			id++
		}
		for i := 0; i < 500; i++ {
			push()
		}
		for q.len() > 0 {
			e := q.pop()
			now = e.t
			got = append(got, e)
			for k := r.Intn(3); k > 0 && id < 5000; k-- {
				push()
			}
		}
		sort.SliceStable(want, func(i, j int) bool { return want[i].t < want[j].t })
		if len(got) != len(want) {
			t.Fatalf("span %d: popped %d of %d events", span, len(got), len(want))
		}
		for i := range want {
			if got[i].t != want[i].t || got[i].id != want[i].id {
				t.Fatalf("span %d: pop %d is (t %d, id %d), want (t %d, id %d)", span, i, got[i].t, got[i].id, want[i].t, want[i].id)
			}
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
