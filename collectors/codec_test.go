package collectors

import (
	"testing"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

func notif(n *pb.Notification) *pb.SubscribeResponse {
	return &pb.SubscribeResponse{Response: &pb.SubscribeResponse_Update{Update: n}}
}

func upd(leaf string, v *pb.TypedValue) *pb.Update {
	return &pb.Update{Path: &pb.Path{Elem: []*pb.PathElem{{Name: leaf}}}, Val: v}
}

func uval(x uint64) *pb.TypedValue { return &pb.TypedValue{Value: &pb.TypedValue_UintVal{UintVal: x}} }

var codecCases = []struct {
	name string
	r    *pb.SubscribeResponse
	fast bool // decoded without protobuf's decoder
}{
	{"interface counters", notif(&pb.Notification{Timestamp: 1795590721024543840, Atomic: true,
		Prefix: &pb.Path{Target: "leaf1", Elem: []*pb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "1/0"}}, {Name: "state"}, {Name: "counters"}}},
		Update: []*pb.Update{upd("in-octets", uval(1<<40)), upd("out-octets", uval(0)), upd("out-discards", uval(7))}}), true},
	{"COUNTERS_DB strings, idle mark, duplicates", notif(&pb.Notification{Timestamp: 5, Atomic: true,
		Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet0:3"}}},
		Update: []*pb.Update{
			{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES"}}}, Val: &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: "123456"}}, Duplicates: 3},
			upd("SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES", &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: "0"}}),
			upd(IdleLeaf, &pb.TypedValue{Value: &pb.TypedValue_BoolVal{BoolVal: true}})}}), true},
	{"two keys, origin, negative int, json, double, empty string", notif(&pb.Notification{Timestamp: -1,
		Prefix: &pb.Path{Origin: "openconfig", Target: "t", Elem: []*pb.PathElem{{Name: "a", Key: map[string]string{"x": "1", "y": ""}}}},
		Update: []*pb.Update{upd("i", &pb.TypedValue{Value: &pb.TypedValue_IntVal{IntVal: -42}}),
			upd("j", &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`"7"`)}}),
			upd("d", &pb.TypedValue{Value: &pb.TypedValue_DoubleVal{DoubleVal: 0.25}}),
			upd("s", &pb.TypedValue{Value: &pb.TypedValue_StringVal{}}),
			{Path: &pb.Path{Elem: []*pb.PathElem{{Name: "multi"}, {Name: "elem", Key: map[string]string{"k": "v"}}}}},
			{}}}), true},
	{"no prefix, no updates", notif(&pb.Notification{Timestamp: 9}), true},
	{"sync response", &pb.SubscribeResponse{Response: &pb.SubscribeResponse_SyncResponse{SyncResponse: true}}, true},
	{"empty", &pb.SubscribeResponse{}, true},
	{"deletes fall back", notif(&pb.Notification{Timestamp: 1, Delete: []*pb.Path{{Elem: []*pb.PathElem{{Name: "gone"}}}}}), false},
	//lint:ignore SA1019 what a target may still send, and the codec must leave to protobuf
	{"deprecated path elements fall back", notif(&pb.Notification{Prefix: &pb.Path{Element: []string{"a", "b"}}}), false},
	{"other value types fall back", notif(&pb.Notification{Update: []*pb.Update{upd("b", &pb.TypedValue{Value: &pb.TypedValue_BytesVal{BytesVal: []byte{1}}})}}), false},
	{"extensions fall back", &pb.SubscribeResponse{Extension: []*gnmi_ext.Extension{{Ext: &gnmi_ext.Extension_History{History: &gnmi_ext.History{}}}}}, false},
}

// The codec decodes what protobuf decodes, and the samples' shapes
// without it.
func TestSubscribeCodecDecodesAsProtobuf(t *testing.T) {
	for _, tc := range codecCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := proto.Marshal(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			c := newSubscribeCodec()
			var fast pb.SubscribeResponse
			if got := c.decodeResponse(b, &fast); got != tc.fast {
				t.Errorf("decoded without protobuf: %v, want %v", got, tc.fast)
			}
			for i := 0; i < 2; i++ { // the second time with interned strings
				var got pb.SubscribeResponse
				if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got); err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(&got, tc.r) {
					t.Errorf("decoded %v, want %v", &got, tc.r)
				}
			}
		})
	}
}

// FuzzSubscribeCodec: on any input the codec gives what proto.Unmarshal
// gives, or fails as it does.
func FuzzSubscribeCodec(f *testing.F) {
	for _, tc := range codecCases {
		b, _ := proto.Marshal(tc.r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got pb.SubscribeResponse
		werr := proto.Unmarshal(b, &want)
		gerr := newSubscribeCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protobuf: %v, codec: %v", werr, gerr)
		}
		if werr == nil && !proto.Equal(&want, &got) {
			t.Fatalf("protobuf decoded %v, codec %v", &want, &got)
		}
	})
}

// BenchmarkSubscribeCodec decodes a port's PFC table as the emulated
// switches send it, with the codec and with protobuf's decoder.
func BenchmarkSubscribeCodec(b *testing.B) {
	n := &pb.Notification{Timestamp: 1795590721024543840, Atomic: true,
		Prefix: &pb.Path{Target: "COUNTERS_DB", Elem: []*pb.PathElem{{Name: "COUNTERS"}, {Name: "Ethernet0"}}}}
	for p := 0; p < 24; p++ {
		n.Update = append(n.Update, upd("SAI_PORT_STAT_PFC_"+string(rune('0'+p%8))+"_RX_PKTS", &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: "0"}}))
	}
	data, _ := proto.Marshal(notif(n))
	b.Run("codec", func(b *testing.B) {
		c := newSubscribeCodec()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var r pb.SubscribeResponse
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var r pb.SubscribeResponse
			if err := proto.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
