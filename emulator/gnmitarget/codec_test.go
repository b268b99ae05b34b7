package gnmitarget

import (
	"strings"
	"testing"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"

	"github.com/labctl/labctl/emulator/fabric"
)

// checkCodec marshals r with the codec and wants protobuf to decode what
// it was given; fast says whether the codec wrote it itself.
func checkCodec(t *testing.T, r *pb.SubscribeResponse, fast bool) {
	t.Helper()
	if _, ok := appendResponse(nil, r); ok != fast {
		t.Errorf("written by the codec: %v, want %v", ok, fast)
	}
	bs, err := newResponseCodec().Marshal(r)
	if err != nil {
		if _, perr := proto.Marshal(r); perr == nil {
			t.Errorf("codec: %v; protobuf encodes it", err)
		}
		return
	}
	var got pb.SubscribeResponse
	if err := proto.Unmarshal(bs.Materialize(), &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, r) {
		t.Errorf("decoded %v, want %v", &got, r)
	}
}

func TestResponseCodec(t *testing.T) {
	tgt, err := New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &fabric.PortCounters{TxBytes: 1 << 40, RxBytes: 12345}
	c.PFCRx[3], c.Queues[3].DepthBytes, c.Queues[5].TxPkts = 9, 1<<20, 3
	up := func(n *pb.Notification) *pb.SubscribeResponse {
		return &pb.SubscribeResponse{Response: &pb.SubscribeResponse_Update{Update: n}}
	}
	for _, idle := range []bool{false, true} {
		for _, n := range tgt.notifications(1795590721024543840, "Ethernet0", c, idle) {
			checkCodec(t, up(n), true) // the PFC table is over 127 bytes, a queue's under
		}
	}
	long := strings.Repeat("x", 20000) // a length of three bytes
	checkCodec(t, up(&pb.Notification{Timestamp: -5, Prefix: &pb.Path{Origin: "o", Target: long,
		Elem: []*pb.PathElem{{Name: "a", Key: map[string]string{"k": "v", "": long}}}},
		Update: []*pb.Update{{Path: &pb.Path{}, Val: &pb.TypedValue{Value: &pb.TypedValue_IntVal{IntVal: -1}}, Duplicates: 4},
			{Val: &pb.TypedValue{Value: &pb.TypedValue_DoubleVal{DoubleVal: 1.5}}},
			{Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{}`)}}},
			{Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{}}}, {}}}), true)
	checkCodec(t, up(&pb.Notification{}), true)
	checkCodec(t, &pb.SubscribeResponse{Response: &pb.SubscribeResponse_SyncResponse{SyncResponse: true}}, false)
	checkCodec(t, up(&pb.Notification{Delete: []*pb.Path{{Target: "t"}}}), false)
	checkCodec(t, up(&pb.Notification{Update: []*pb.Update{{Val: &pb.TypedValue{Value: &pb.TypedValue_BytesVal{BytesVal: []byte{1}}}}}}), false)
	checkCodec(t, up(&pb.Notification{Prefix: &pb.Path{Target: "\xff"}}), false) // protobuf's error, not bytes
}

// FuzzResponseCodec: whatever protobuf decodes, the codec writes so that
// it decodes the same again.
func FuzzResponseCodec(f *testing.F) {
	tgt, _ := New("leaf1", nil)
	for _, n := range tgt.notifications(7, "1/0", &fabric.PortCounters{TxBytes: 300}, true) {
		b, _ := proto.Marshal(&pb.SubscribeResponse{Response: &pb.SubscribeResponse_Update{Update: n}})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r pb.SubscribeResponse
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		bs, err := newResponseCodec().Marshal(&r)
		if err != nil {
			return // protobuf refuses it too
		}
		var got pb.SubscribeResponse
		if err := proto.Unmarshal(bs.Materialize(), &got); err != nil || !proto.Equal(&got, &r) {
			t.Fatalf("%v: decoded %v (%v)", &r, &got, err)
		}
	})
}

// BenchmarkResponseCodec encodes a port's PFC table as published, with
// the codec and with protobuf's encoder.
func BenchmarkResponseCodec(b *testing.B) {
	tgt, _ := New("leaf1", nil)
	n := tgt.notifications(1795590721024543840, "Ethernet0", &fabric.PortCounters{TxBytes: 1 << 40}, false)[1]
	r := &pb.SubscribeResponse{Response: &pb.SubscribeResponse_Update{Update: n}}
	b.Run("codec", func(b *testing.B) {
		c := newResponseCodec()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := c.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := proto.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
