package collectors

import (
	"math"
	"unicode/utf8"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Why a codec of its own: a collector's receive loop decodes every
// sample of its switch (an emulated 128-host fat-tree: some 600,000
// updates a point), and protobuf's generic decoder allocates every
// message, path element and string on its own: eight or more allocations
// per update, the largest cost of collecting. subscribeCodec decodes the
// SubscribeResponses a collector sees (a notification of updates, or the
// sync response) into the same messages with a few allocations per
// notification: the updates, their values, paths and elements each in
// one slice, and the strings that repeat (leaf names, ports, small
// values) interned per stream. Anything else (deletes, errors,
// extensions, deprecated or unknown fields, values of other types, a
// field repeated where proto3 would merge) goes to protobuf's decoder
// whole, so the result is always what proto.Unmarshal gives
// (FuzzSubscribeCodec checks it).

// subscribeCodec is the client codec of one subscription stream (its
// Recv loop is the only caller of Unmarshal, so the interned strings need
// no lock).
type subscribeCodec struct {
	proto  encoding.CodecV2
	intern map[string]string
}

func newSubscribeCodec() *subscribeCodec {
	return &subscribeCodec{proto: encoding.GetCodecV2("proto"), intern: map[string]string{}}
}

// Name is protobuf's: the wire format is the same.
func (c *subscribeCodec) Name() string { return "proto" }

func (c *subscribeCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c *subscribeCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*pb.SubscribeResponse)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData() // read only until we return: every string is copied
	} else {
		b = data.Materialize()
	}
	if c.decodeResponse(b, r) {
		return nil
	}
	proto.Reset(r)
	return proto.Unmarshal(b, r)
}

// maxInterned bounds the interned strings of a stream: names, keys and
// one-digit values, a few hundred for a switch.
const maxInterned = 4096

// str is b as a string; in a path (names repeat) or a single character
// (the string values of idle counters), interned.
func (c *subscribeCodec) str(b []byte, path bool) (string, bool) {
	intern := path || len(b) <= 1
	if intern {
		if s, ok := c.intern[string(b)]; ok {
			return s, true
		}
	}
	if !utf8.Valid(b) {
		return "", false // proto.Unmarshal refuses it
	}
	s := string(b)
	if intern && len(c.intern) < maxInterned && len(b) <= 64 {
		c.intern[s] = s
	}
	return s, true
}

// field reads one field's tag and, for length-delimited ones, its bytes.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	v    uint64 // varint or fixed64 value
	data []byte // bytes
}

// each calls fn with every field of b, and says whether b parsed and fn
// took them all.
func each(b []byte, fn func(field) bool) bool {
	for len(b) > 0 {
		var f field
		k := -1
		// Most fields have a one-byte tag and a one-byte length or value.
		if t := b[0]; t < 0x80 && t>>3 != 0 && len(b) > 1 && b[1] < 0x80 {
			switch protowire.Type(t & 7) {
			case protowire.BytesType:
				if n := 2 + int(b[1]); n <= len(b) {
					f, k = field{num: protowire.Number(t >> 3), typ: protowire.BytesType, data: b[2:n]}, n
				}
			case protowire.VarintType:
				f, k = field{num: protowire.Number(t >> 3), typ: protowire.VarintType, v: uint64(b[1])}, 2
			}
		}
		if k < 0 {
			f, k = next(b)
		}
		if k < 0 || !fn(f) {
			return false
		}
		b = b[k:]
	}
	return true
}

func next(b []byte) (field, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, n
	}
	f := field{num: num, typ: typ}
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(b[n:])
	case protowire.BytesType:
		f.data, m = protowire.ConsumeBytes(b[n:])
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(b[n:])
	default:
		return f, -1 // not in the fields decoded here
	}
	if m < 0 {
		return f, m
	}
	return f, n + m
}

func (c *subscribeCodec) decodeResponse(b []byte, r *pb.SubscribeResponse) bool {
	var n *pb.Notification
	sync, seen := false, false
	ok := each(b, func(f field) bool {
		switch {
		case seen: // a second response in the oneof: protobuf's rules
			return false
		case f.num == 1 && f.typ == protowire.BytesType:
			var ok bool
			n, ok = c.decodeNotification(f.data)
			seen = true
			return ok
		case f.num == 3 && f.typ == protowire.VarintType:
			sync, seen = f.v != 0, true
			return true
		}
		return false
	})
	if !ok {
		return false
	}
	proto.Reset(r)
	if n != nil {
		r.Response = &pb.SubscribeResponse_Update{Update: n}
	} else if seen {
		r.Response = &pb.SubscribeResponse_SyncResponse{SyncResponse: sync}
	}
	return true
}

// slabs are a notification's messages, allocated together.
type slabs struct {
	ups   []pb.Update
	ptrs  []*pb.Update
	tvs   []pb.TypedValue
	paths []pb.Path
	elems []pb.PathElem
	eptrs []*pb.PathElem
	ei    int // elements used
	// the values' oneof wrappers, by update, made when first needed
	svals []pb.TypedValue_StringVal
	uvals []pb.TypedValue_UintVal
}

// count is how many updates and path elements a notification holds.
func count(b []byte) (updates, elems int, ok bool) {
	ok = each(b, func(f field) bool {
		switch f.num {
		case 2:
			elems += countElems(f.data)
		case 4:
			updates++
			return each(f.data, func(g field) bool {
				if g.num == 1 {
					elems += countElems(g.data)
				}
				return true
			})
		}
		return true
	})
	return updates, elems, ok
}

func countElems(p []byte) int {
	n := 0
	each(p, func(f field) bool {
		if f.num == 3 {
			n++
		}
		return true
	})
	return n
}

func (c *subscribeCodec) decodeNotification(b []byte) (*pb.Notification, bool) {
	nu, ne, ok := count(b)
	if !ok {
		return nil, false
	}
	s := &slabs{ups: make([]pb.Update, nu), ptrs: make([]*pb.Update, 0, nu), tvs: make([]pb.TypedValue, nu),
		paths: make([]pb.Path, nu+1), elems: make([]pb.PathElem, ne), eptrs: make([]*pb.PathElem, ne)}
	n := &pb.Notification{}
	prefix := false
	ok = each(b, func(f field) bool {
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			n.Timestamp = int64(f.v)
		case f.num == 2 && f.typ == protowire.BytesType && !prefix:
			n.Prefix, prefix = &s.paths[nu], true
			return c.decodePath(f.data, n.Prefix, s)
		case f.num == 4 && f.typ == protowire.BytesType:
			i := len(s.ptrs)
			s.ptrs = append(s.ptrs, &s.ups[i])
			return c.decodeUpdate(f.data, i, s)
		case f.num == 6 && f.typ == protowire.VarintType:
			n.Atomic = f.v != 0
		default:
			return false
		}
		return true
	})
	if len(s.ptrs) > 0 {
		n.Update = s.ptrs
	}
	return n, ok
}

func (c *subscribeCodec) decodePath(b []byte, p *pb.Path, s *slabs) bool {
	start := s.ei
	ok := each(b, func(f field) bool {
		if f.typ != protowire.BytesType {
			return false
		}
		var ok bool
		switch f.num {
		case 2:
			p.Origin, ok = c.str(f.data, true)
		case 3:
			if s.ei == len(s.elems) {
				return false // more than counted
			}
			e := &s.elems[s.ei]
			s.eptrs[s.ei] = e
			s.ei++
			ok = c.decodeElem(f.data, e)
		case 4:
			p.Target, ok = c.str(f.data, true)
		}
		return ok
	})
	if s.ei > start {
		p.Elem = s.eptrs[start:s.ei:s.ei]
	}
	return ok
}

func (c *subscribeCodec) decodeElem(b []byte, e *pb.PathElem) bool {
	return each(b, func(f field) bool {
		if f.typ != protowire.BytesType {
			return false
		}
		switch f.num {
		case 1:
			var ok bool
			e.Name, ok = c.str(f.data, true)
			return ok
		case 2:
			var key, val string
			if !each(f.data, func(g field) bool {
				var ok bool
				switch {
				case g.typ != protowire.BytesType:
				case g.num == 1:
					key, ok = c.str(g.data, true)
				case g.num == 2:
					val, ok = c.str(g.data, true)
				}
				return ok
			}) {
				return false
			}
			if e.Key == nil {
				e.Key = map[string]string{}
			}
			e.Key[key] = val
			return true
		}
		return false
	})
}

func (c *subscribeCodec) decodeUpdate(b []byte, i int, s *slabs) bool {
	u, path, val := &s.ups[i], false, false
	return each(b, func(f field) bool {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType && !path:
			u.Path, path = &s.paths[i], true
			return c.decodePath(f.data, u.Path, s)
		case f.num == 3 && f.typ == protowire.BytesType && !val:
			u.Val, val = &s.tvs[i], true
			return c.decodeValue(f.data, i, u.Val, s)
		case f.num == 4 && f.typ == protowire.VarintType:
			u.Duplicates = uint32(f.v)
			return true
		}
		return false
	})
}

// decodeValue decodes the values telemetry carries; others fall back.
func (c *subscribeCodec) decodeValue(b []byte, i int, tv *pb.TypedValue, s *slabs) bool {
	return each(b, func(f field) bool {
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			str, ok := c.str(f.data, false)
			if !ok {
				return false
			}
			if s.svals == nil {
				s.svals = make([]pb.TypedValue_StringVal, len(s.ups))
			}
			w := &s.svals[i]
			w.StringVal = str
			tv.Value = w
		case f.num == 2 && f.typ == protowire.VarintType:
			tv.Value = &pb.TypedValue_IntVal{IntVal: int64(f.v)}
		case f.num == 3 && f.typ == protowire.VarintType:
			if s.uvals == nil {
				s.uvals = make([]pb.TypedValue_UintVal, len(s.ups))
			}
			w := &s.uvals[i]
			w.UintVal = f.v
			tv.Value = w
		case f.num == 4 && f.typ == protowire.VarintType:
			tv.Value = &pb.TypedValue_BoolVal{BoolVal: f.v != 0}
		case f.num == 11 && f.typ == protowire.BytesType:
			tv.Value = &pb.TypedValue_JsonIetfVal{JsonIetfVal: append([]byte{}, f.data...)}
		case f.num == 14 && f.typ == protowire.Fixed64Type:
			tv.Value = &pb.TypedValue_DoubleVal{DoubleVal: math.Float64frombits(f.v)}
		default:
			return false
		}
		return true
	})
}
