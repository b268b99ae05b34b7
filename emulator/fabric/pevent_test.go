package fabric

import (
	"math/rand"
	"sort"
	"testing"
)

func TestEventQueueOrdersByTimeThenSchedule(t *testing.T) {
	var q eventQueue
	r := rand.New(rand.NewSource(1))
	var want []int64
	for i := 0; i < 1000; i++ {
		tm := r.Int63n(100)
		q.push(event{t: tm, qp: int32(i)})
		want = append(want, tm)
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	last := event{t: -1}
	for i := 0; q.len() > 0; i++ {
		e := q.pop()
		if e.t != want[i] || (e.t == last.t && e.qp < last.qp) {
			t.Fatalf("pop %d: %+v after %+v", i, e, last)
		}
		last = e
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
