package gnmitarget

import (
	"math"
	"unicode/utf8"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Why a codec of its own: every sample of every port goes out as a
// SubscribeResponse, and protobuf's generic encoder sizes each message
// before it writes it, a walk of the whole tree twice, the largest cost
// of sending. responseCodec writes the responses that carry one
// notification of the shapes published here in one pass (a nested
// message's length is written once it is known, its bytes moved up in
// the rare case the length takes more than one byte); everything else
// (other messages, deletes, deprecated or unknown fields, values
// of other types) goes to protobuf's encoder. TestResponseCodec and
// FuzzResponseCodec check that what it writes decodes to what it was
// given.
type responseCodec struct{ proto encoding.CodecV2 }

func newResponseCodec() responseCodec { return responseCodec{proto: encoding.GetCodecV2("proto")} }

// Name is protobuf's: the wire format is the same.
func (responseCodec) Name() string { return "proto" }

func (c responseCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.proto.Unmarshal(data, v)
}

func (c responseCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*pb.SubscribeResponse); ok {
		// room for a typical update (leaf name and value) without growing
		if b, ok := appendResponse(make([]byte, 0, 128+64*len(r.GetUpdate().GetUpdate())), r); ok {
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil
		}
	}
	return c.proto.Marshal(v)
}

func plain(m protoreflect.ProtoMessage) bool { return len(m.ProtoReflect().GetUnknown()) == 0 }

func appendResponse(b []byte, r *pb.SubscribeResponse) ([]byte, bool) {
	n := r.GetUpdate()
	if n == nil || len(r.GetExtension()) > 0 || !plain(r) {
		return nil, false
	}
	return appendMessage(b, 1, func(b []byte) ([]byte, bool) { return appendNotification(b, n) })
}

// appendMessage appends field num holding the message fn appends.
func appendMessage(b []byte, num protowire.Number, fn func([]byte) ([]byte, bool)) ([]byte, bool) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0) // the length, if it fits in one byte
	b, ok := fn(b)
	if !ok {
		return nil, false
	}
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b, true
	}
	w := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, w-1)...)
	copy(b[at+w:], b[at+1:at+1+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b, true
}

func appendNotification(b []byte, n *pb.Notification) ([]byte, bool) {
	if len(n.GetDelete()) > 0 || !plain(n) {
		return nil, false
	}
	if ts := n.GetTimestamp(); ts != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(ts))
	}
	ok := true
	if p := n.GetPrefix(); p != nil {
		if b, ok = appendMessage(b, 2, func(b []byte) ([]byte, bool) { return appendPath(b, p) }); !ok {
			return nil, false
		}
	}
	for _, u := range n.GetUpdate() {
		if u == nil {
			return nil, false
		}
		if b, ok = appendMessage(b, 4, func(b []byte) ([]byte, bool) { return appendUpdate(b, u) }); !ok {
			return nil, false
		}
	}
	if n.GetAtomic() {
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b, true
}

// stringsOK: protobuf refuses to encode a string that is not UTF-8.
func stringsOK(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendPath(b []byte, p *pb.Path) ([]byte, bool) {
	//lint:ignore SA1019 a path that still uses it goes to protobuf's encoder
	if len(p.GetElement()) > 0 || !plain(p) || !stringsOK(p.GetOrigin(), p.GetTarget()) {
		return nil, false
	}
	b = appendString(b, 2, p.GetOrigin())
	ok := true
	for _, e := range p.GetElem() {
		if e == nil || !plain(e) || !stringsOK(e.GetName()) {
			return nil, false
		}
		for k, v := range e.GetKey() {
			if !stringsOK(k, v) {
				return nil, false
			}
		}
		if b, ok = appendMessage(b, 3, func(b []byte) ([]byte, bool) {
			b = appendString(b, 1, e.GetName())
			for k, v := range e.GetKey() {
				b, _ = appendMessage(b, 2, func(b []byte) ([]byte, bool) {
					b = protowire.AppendTag(b, 1, protowire.BytesType)
					b = protowire.AppendString(b, k)
					b = protowire.AppendTag(b, 2, protowire.BytesType)
					return protowire.AppendString(b, v), true
				})
			}
			return b, true
		}); !ok {
			return nil, false
		}
	}
	return appendString(b, 4, p.GetTarget()), true
}

func appendUpdate(b []byte, u *pb.Update) ([]byte, bool) {
	//lint:ignore SA1019 an update that still uses it goes to protobuf's encoder
	if u.GetValue() != nil || !plain(u) {
		return nil, false
	}
	ok := true
	if p := u.GetPath(); p != nil {
		if b, ok = appendMessage(b, 1, func(b []byte) ([]byte, bool) { return appendPath(b, p) }); !ok {
			return nil, false
		}
	}
	if v := u.GetVal(); v != nil {
		if b, ok = appendMessage(b, 3, func(b []byte) ([]byte, bool) { return appendValue(b, v) }); !ok {
			return nil, false
		}
	}
	if d := u.GetDuplicates(); d != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	return b, true
}

// appendValue writes the values published here; others go to protobuf.
// A oneof's field is written even when zero: it says which is set.
func appendValue(b []byte, v *pb.TypedValue) ([]byte, bool) {
	if !plain(v) {
		return nil, false
	}
	switch x := v.GetValue().(type) {
	case nil:
	case *pb.TypedValue_StringVal:
		if !stringsOK(x.StringVal) {
			return nil, false
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, x.StringVal)
	case *pb.TypedValue_IntVal:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(x.IntVal))
	case *pb.TypedValue_UintVal:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, x.UintVal)
	case *pb.TypedValue_BoolVal:
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(x.BoolVal))
	case *pb.TypedValue_JsonIetfVal:
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendBytes(b, x.JsonIetfVal)
	case *pb.TypedValue_DoubleVal:
		b = protowire.AppendTag(b, 14, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(x.DoubleVal))
	default:
		return nil, false
	}
	return b, true
}
