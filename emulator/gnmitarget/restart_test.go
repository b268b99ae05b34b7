package gnmitarget

import (
	"context"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/emulator/fabric"
)

// A restart ends every stream, serves again on the same address, and a
// new subscription there gets the samples published since.
func TestRestartDropsStreamsAndServesAgain(t *testing.T) {
	t.Parallel()
	tgt, c := serve(t)
	sc, err := c.Subscribe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sc.Send(&pb.SubscribeRequest{Request: &pb.SubscribeRequest_Subscribe{Subscribe: &pb.SubscriptionList{
		Prefix: &pb.Path{Target: CountersDB}, Mode: pb.SubscriptionList_STREAM,
		Subscription: []*pb.Subscription{{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "*"}}}}}}}})
	if _, err := sc.Recv(); err != nil { // sync
		t.Fatal(err)
	}
	addr := tgt.Addr()
	broken := make(chan error, 1)
	go func() {
		for {
			if _, err := sc.Recv(); err != nil {
				broken <- err
				return
			}
		}
	}()
	began := time.Now()
	if err := tgt.Restart(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d < 100*time.Millisecond {
		t.Errorf("restart took %v, shorter than its down time", d)
	}
	select {
	case <-broken:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream outlived the restart")
	}
	if tgt.Addr() != addr {
		t.Errorf("serves on %s after the restart, was %s", tgt.Addr(), addr)
	}
	ts := time.Unix(1700000000, 7)
	tgt.Publish(ts, map[string]*fabric.PortCounters{"1/0": {TxBytes: 1}})
	var got []*pb.Notification
	for end := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		got, _ = onceErr(c, CountersDB, &pb.Path{Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "*"}}})
	}
	if len(got) == 0 || got[0].GetTimestamp() != ts.UnixNano() {
		t.Fatalf("after the restart: %v", got)
	}
	tgt.Close()
	if err := tgt.Restart(context.Background(), 0); err == nil {
		t.Error("a closed target restarted")
	}
}
