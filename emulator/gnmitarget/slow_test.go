package gnmitarget

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
)

// One subscriber that stops reading, over a real gRPC stream, does not
// slow another: the publisher waits for the stuck one at most once
// (maxWait), and the reading one receives every snapshot up to the last.
func TestStuckSubscriberDoesNotSlowTheOthers(t *testing.T) {
	tgt, c := serve(t)
	tgt.maxWait = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = streamCountersDB(ctx, t, c) // stuck: never read again
	live := streamCountersDB(ctx, t, c)
	waitFlows := time.Now().Add(5 * time.Second)
	for {
		tgt.flowMu.Lock()
		n := len(tgt.flows)
		tgt.flowMu.Unlock()
		if n == 2 || time.Now().After(waitFlows) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Enough samples to fill the stuck stream's HTTP/2 windows many times.
	const n, nports = 1000, 16
	ports := map[string]*fabric.PortCounters{}
	for i := range nports {
		ports[fmt.Sprintf("1/%d", i)] = &fabric.PortCounters{}
	}
	t0 := time.Unix(1700000000, 0)
	last := t0.Add(n * 100 * time.Microsecond).UnixNano()
	got := make(chan error, 1)
	go func() {
		for {
			r, err := live.Recv()
			if err != nil {
				got <- err
				return
			}
			if r.GetUpdate().GetTimestamp() == last {
				got <- nil
				return
			}
		}
	}()
	slow := 0
	for i := 1; i <= n; i++ {
		start := time.Now()
		tgt.Publish(t0.Add(time.Duration(i)*100*time.Microsecond), ports)
		if time.Since(start) >= tgt.maxWait {
			slow++
		}
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the reading subscriber never got the last snapshot")
	}
	tgt.flowMu.Lock()
	var lagging int
	for f := range tgt.flows {
		if f.lagging {
			lagging++
		}
	}
	tgt.flowMu.Unlock()
	if lagging != 1 {
		t.Errorf("%d subscribers lagging, want the stuck one only", lagging)
	}
	if slow > 2 {
		t.Errorf("the publisher waited maxWait %d times for the stuck subscriber", slow)
	}
}
