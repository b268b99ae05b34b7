package agent

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/labctl/labctl/perftest"
)

// The result's records and server runs are appended as JSON by hand, byte
// for byte what json.Marshal writes for them (field order, omitempty,
// string escaping with HTML characters escaped, ES6 float notation): an
// emulated point writes hundreds of thousands of them, and Marshal's
// reflection and its copy of every output cost more than the simulation.
// TestEncodersKnowEveryField fails when a field is added to one of these
// types without being added here.

// appendRecord appends rec's JSON with output (bytes or rec.Output) as
// its output.
func appendRecord[T string | []byte](b []byte, rec *perftest.FlowRecord, output T) ([]byte, error) {
	b = append(b, `{"flow_id":`...)
	b = strconv.AppendInt(b, int64(rec.FlowID), 10)
	b = appendKeyString(b, `,"src":`, rec.Src)
	b = appendKeyString(b, `,"dst":`, rec.Dst)
	b = appendKeyInt(b, `,"bytes":`, rec.Bytes)
	b = appendKeyInt(b, `,"start_ns":`, rec.StartNs)
	b = appendKeyInt(b, `,"end_ns":`, rec.EndNs)
	if rec.LagNs != 0 {
		b = appendKeyInt(b, `,"lag_ns":`, rec.LagNs)
	}
	b = appendKeyString(b, `,"status":`, rec.Status)
	b = appendKeyString(b, `,"tool":`, rec.Tool)
	if rec.Group != "" {
		b = appendKeyString(b, `,"group":`, rec.Group)
	}
	if rec.Step != 0 {
		b = appendKeyInt(b, `,"step":`, int64(rec.Step))
	}
	if rec.Error != "" {
		b = appendKeyString(b, `,"error":`, rec.Error)
	}
	if len(output) > 0 {
		b = appendString(append(b, `,"output":`...), output)
	}
	if r := rec.Result; r != nil {
		b = appendKeyInt(b, `,"result":{"bytes":`, r.Bytes)
		b = appendKeyInt(b, `,"iterations":`, r.Iterations)
		var err error
		for _, f := range [...]struct {
			key string
			v   float64
		}{{`,"bw_peak":`, r.PeakGbps}, {`,"bw_average":`, r.AvgGbps}, {`,"msg_rate":`, r.MsgRateMpps}} {
			if b, err = appendFloat(append(b, f.key...), f.v); err != nil {
				return b, err
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendServer appends sr's JSON with output (bytes or sr.Output) as its
// output.
func appendServer[T string | []byte](b []byte, sr *ServerRun, output T) []byte {
	b = append(b, `{"flow_id":`...)
	b = strconv.AppendInt(b, int64(sr.FlowID), 10)
	b = appendString(append(b, `,"output":`...), output)
	if sr.Stderr != "" {
		b = appendKeyString(b, `,"stderr":`, sr.Stderr)
	}
	b = appendKeyInt(b, `,"exit_code":`, int64(sr.ExitCode))
	if sr.StartNs != 0 {
		b = appendKeyInt(b, `,"start_ns":`, sr.StartNs)
	}
	if sr.EndNs != 0 {
		b = appendKeyInt(b, `,"end_ns":`, sr.EndNs)
	}
	return append(b, '}')
}

func appendKeyInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

func appendKeyString(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

// appendFloat is encoding/json's float64: 'f' notation but below 1e-6 and
// from 1e21 ('e', exponent without a leading zero); NaN and infinities
// are refused.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 -> e-7
		b = b[:n-1]
	}
	return b, nil
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are (with
// HTML escaping, its default: not <, > and &).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString is encoding/json's string: quoted, with \", \\, \b, \f,
// \n, \r, \t, other control and HTML characters as \u00XX, invalid UTF-8
// as \ufffd and U+2028, U+2029 escaped.
func appendString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		i = safeRun(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(s[i : i+n])) // no copy: the conversion does not escape
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// safeRun returns the index of the first byte from i in s that is not
// jsonSafe (len(s) if none), eight bytes at a time while none is: most of
// a result is perftest output, long runs of safe bytes.
func safeRun[T string | []byte](s T, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var w [8]byte
	for ; i+8 <= len(s); i += 8 {
		copy(w[:], s[i:i+8])
		x := binary.LittleEndian.Uint64(w[:])
		// A byte below 0x20, non-ASCII, or one of " & (0x22, 0x26: equal
		// once bit 2 is set), < > (0x3c, 0x3e: bit 1) and \, by has-less
		// and has-zero-byte bit tricks as plainRun.
		qa, lg, bs := (x|ones*4)^(ones*0x26), (x|ones*2)^(ones*0x3e), x^(ones*'\\')
		if ((x-ones*0x20)&^x|(qa-ones)&^qa|(lg-ones)&^lg|(bs-ones)&^bs|x)&highs != 0 {
			break
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf && jsonSafe[s[i]] {
		i++
	}
	return i
}
