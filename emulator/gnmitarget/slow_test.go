package gnmitarget

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/labctl/labctl/emulator/fabric"
)

// One subscriber that stops reading, over a real gRPC stream, does not
// slow another: the publisher waits for the stuck one at most once
// (maxWait), and the reading one receives every snapshot up to the last.
func TestStuckSubscriberDoesNotSlowTheOthers(t *testing.T) {
	tgt, c := serve(t)
	// Long enough that the reading subscriber, on a loaded machine, never
	// takes it for one snapshot; short enough to count the waits.
	tgt.maxWait = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := streamCountersDB(ctx, t, c) // also: the target serves, its address is set
	// The stuck client's windows are fixed at 64 KiB (no BDP growth), so
	// its stream blocks for good once they fill, as a dead client's does.
	stuckConn, err := grpc.NewClient(tgt.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer stuckConn.Close()
	_ = streamCountersDB(ctx, t, pb.NewGNMIClient(stuckConn)) // never read again
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
	if slow > 1 {
		t.Errorf("the publisher waited maxWait %d times for the stuck subscriber", slow)
	}
}
