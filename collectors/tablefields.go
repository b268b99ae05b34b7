package collectors

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	pb "github.com/openconfig/gnmi/proto/gnmi"
)

// A COUNTERS_DB key sent whole is one JSON_IETF object of counter names to
// values, sonic-gnmi's values being strings of digits:
//
//	{"SAI_PORT_STAT_PFC_0_RX_PKTS":"0","SAI_PORT_STAT_PFC_0_TX_PKTS":"12",...}
//
// The emulated switches send a port's two dozen PFC counters so, as one
// update instead of one per counter, which a sample of every port of
// every switch made the gNMI server's and the collector's largest cost.
// Such objects are read by a scanner for exactly this shape (flat; plain
// keys; numbers or plain strings), and anything else by encoding/json, to
// the same fields (FuzzTableFields).

// isObject says whether v is a JSON_IETF object.
func isObject(v *pb.TypedValue) bool {
	b := v.GetJsonIetfVal()
	i := skipSpace(b, 0)
	return i < len(b) && b[i] == '{'
}

// tableFields sets fields[names[member]] for each member of the object
// blob named in names whose value is an unsigned integer, as a number or
// a string of digits (as uintOf reads a single value); a named member
// with any other value unsets its field. It returns how many named
// members it could not read and the first of them. An object that is not
// valid JSON sets nothing and counts as one, its key empty.
func tableFields(blob []byte, names map[string]string, fields map[string]any) (bad int, first member) {
	var buf [40]member
	ms, ok := flatMembers(blob, buf[:0])
	if !ok {
		if ms = slowMembers(blob); ms == nil {
			return 1, member{val: blob}
		}
	}
	anyBad := false
	for _, m := range ms {
		if name, ok := names[string(m.key)]; ok {
			if v, ok := digits(m.val); ok {
				fields[name] = v
				continue
			}
			delete(fields, name) // a key given twice: the last wins, as in encoding/json
			anyBad = true
		}
	}
	if !anyBad {
		return 0, member{}
	}
	return lastUnreadable(ms, names)
}

// lastUnreadable counts the named members whose last value is no
// unsigned integer (as encoding/json, the last of a key given twice is
// what counts) and returns the first of them.
func lastUnreadable(ms []member, names map[string]string) (bad int, first member) {
	last := map[string]member{}
	var order []string
	for _, m := range ms {
		if _, ok := names[string(m.key)]; ok {
			if _, seen := last[string(m.key)]; !seen {
				order = append(order, string(m.key))
			}
			last[string(m.key)] = m
		}
	}
	for _, k := range order {
		if _, ok := digits(last[k].val); !ok {
			if bad++; bad == 1 {
				first = last[k]
			}
		}
	}
	return bad, first
}

// digits reads an unsigned decimal integer as strconv.ParseUint(s, 10,
// 64) does, without making a string of it.
func digits(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// member is one member of an object: its key and its value's text (a
// string's contents, unquoted), pointing into the object's bytes.
type member struct{ key, val []byte }

// slowMembers reads any object with encoding/json, its members in the
// order of their keys (a map has no other); nil if blob is not one.
func slowMembers(blob []byte) []member {
	var raw map[string]json.RawMessage
	if json.Unmarshal(blob, &raw) != nil {
		return nil
	}
	ms := make([]member, 0, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			ms = append(ms, member{[]byte(k), []byte(s)})
		} else {
			ms = append(ms, member{[]byte(k), v})
		}
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	return ms
}

// flatMembers reads an object whose keys and string values hold no
// escapes and whose values are strings or numbers, appending to ms; false
// for anything else (which slowMembers reads). A key given twice is
// given twice (encoding/json keeps the last; tableFields applies them in
// order).
func flatMembers(b []byte, ms []member) ([]member, bool) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return ms, skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return nil, false
		}
		if i = skipSpace(b, j); i == len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		var val []byte
		if i < len(b) && b[i] == '"' {
			if val, j, ok = plainString(b, i); !ok {
				return nil, false
			}
		} else if val, j, ok = plainNumber(b, i); !ok {
			return nil, false
		}
		ms = append(ms, member{key, val})
		switch i = skipSpace(b, j); {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return ms, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a string at b[i] of printable ASCII without escapes,
// returning its contents and the index after it.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// plainNumber reads a JSON number at b[i] made of digits only (what a
// counter is; anything else goes to encoding/json).
func plainNumber(b []byte, i int) ([]byte, int, bool) {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == i || j-i > 1 && b[i] == '0' {
		return nil, 0, false
	}
	return b[i:j], j, true
}
