package collectors

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Line protocol escaping: measurement names escape commas and spaces; tag
// keys, tag values and field keys also escape '='; string field values are
// quoted with '"' and '\' escaped. Line protocol cannot carry a line
// break anywhere (it ends the point, and InfluxDB has no escape for it), so
// one becomes a space: a gap's reason quoting a tool's stderr stays one line.
var (
	measEsc = strings.NewReplacer(`\`, `\\`, ",", `\,`, " ", `\ `, "\n", `\ `, "\r", `\ `)
	keyEsc  = strings.NewReplacer(`\`, `\\`, ",", `\,`, " ", `\ `, "=", `\=`, "\n", `\ `, "\r", `\ `)
	strEsc  = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ", "\r", " ")
)

// EncodeLP writes p as one line of InfluxDB line protocol.
func EncodeLP(w io.Writer, p Point) error {
	b, err := AppendLP(nil, p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendLP appends p as one line of line protocol to b (what EncodeLP
// writes). Every telemetry sample goes through it, so it appends in
// place: no replacer unless a name needs escaping, keys sorted in a small
// array on the stack.
func AppendLP(b []byte, p Point) ([]byte, error) {
	if p.Measurement == "" || len(p.Fields) == 0 {
		return b, fmt.Errorf("line protocol: point needs a measurement and a field: %+v", p)
	}
	b = appendEsc(b, p.Measurement, measEsc, " ,\\\r\n")
	var arr [16]string
	for _, k := range sortedInto(arr[:0], p.Tags) {
		v := p.Tags[k]
		if v == "" {
			continue // empty tag values are not allowed
		}
		b = append(b, ',')
		b = appendEsc(b, k, keyEsc, " ,=\\\r\n")
		b = append(b, '=')
		b = appendEsc(b, v, keyEsc, " ,=\\\r\n")
	}
	for i, k := range sortedInto(arr[:0], p.Fields) {
		if i == 0 {
			b = append(b, ' ')
		} else {
			b = append(b, ',')
		}
		b = appendEsc(b, k, keyEsc, " ,=\\\r\n")
		b = append(b, '=')
		switch v := p.Fields[k].(type) {
		case uint64:
			// InfluxDB 1.x has no unsigned type: counters are written as
			// integers so the archive re-imports anywhere.
			if v > math.MaxInt64 {
				return b, fmt.Errorf("line protocol: field %s: %d overflows an integer", k, v)
			}
			b = append(strconv.AppendUint(b, v, 10), 'i')
		case int64:
			b = append(strconv.AppendInt(b, v, 10), 'i')
		case int:
			b = append(strconv.AppendInt(b, int64(v), 10), 'i')
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return b, fmt.Errorf("line protocol: field %s: %v is not representable", k, v)
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		case bool:
			b = strconv.AppendBool(b, v)
		case string:
			b = append(b, '"')
			b = appendEsc(b, v, strEsc, "\"\\\r\n")
			b = append(b, '"')
		default:
			return b, fmt.Errorf("line protocol: field %s: unsupported type %T", k, v)
		}
	}
	// A point without a time (a parsed line that had none) is written
	// without one, as it came: UnixNano of the zero time is not a time.
	if !p.Time.IsZero() {
		b = append(b, ' ')
		b = strconv.AppendInt(b, p.Time.UnixNano(), 10)
	}
	return append(b, '\n'), nil
}

// appendEsc appends s, escaped by r when it holds any of special.
func appendEsc(b []byte, s string, r *strings.Replacer, special string) []byte {
	if !strings.ContainsAny(s, special) {
		return append(b, s...)
	}
	return append(b, r.Replace(s)...)
}

// sortedInto appends m's keys to ks, sorted.
func sortedInto[V any](ks []string, m map[string]V) []string {
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ParseLP parses one line of line protocol (with a nanosecond timestamp).
func ParseLP(line string) (Point, error) {
	line = strings.TrimRight(line, "\r\n")
	head, rest, err := splitUnescaped(line, ' ', false)
	if err != nil || rest == "" {
		return Point{}, fmt.Errorf("line protocol: %q: missing fields", line)
	}
	fieldsPart, tsPart, err := splitUnescaped(rest, ' ', true)
	if err != nil {
		return Point{}, fmt.Errorf("line protocol: %q: %w", line, err)
	}
	// Sized by the separators (an upper bound: escaped or quoted ones
	// count too), so the maps do not grow while filled.
	p := Point{Tags: make(map[string]string, strings.Count(head, ",")), Fields: make(map[string]any, strings.Count(fieldsPart, ",")+1)}
	meas, tags, err := splitUnescaped(head, ',', false)
	if err != nil {
		return Point{}, err
	}
	p.Measurement = unescape(meas)
	if p.Measurement == "" {
		return Point{}, fmt.Errorf("line protocol: %q: empty measurement", line)
	}
	// A part goes on while a separator ended the last (a trailing one
	// leaves an empty part, an error, as splitting would).
	for more := len(meas) < len(head); more; {
		t, rest, err := splitUnescaped(tags, ',', false)
		if err != nil {
			return Point{}, err
		}
		more, tags = len(t) < len(tags), rest
		k, v, err := splitUnescaped(t, '=', false)
		if err != nil || k == "" || v == "" {
			return Point{}, fmt.Errorf("line protocol: %q: bad tag %q", line, t)
		}
		p.Tags[unescape(k)] = unescape(v)
	}
	for fields, more := fieldsPart, true; more; {
		f, rest, err := splitUnescaped(fields, ',', true)
		if err != nil {
			return Point{}, err
		}
		more, fields = len(f) < len(fields), rest
		k, v, err := splitUnescaped(f, '=', false)
		if err != nil || k == "" || v == "" {
			return Point{}, fmt.Errorf("line protocol: %q: bad field %q", line, f)
		}
		val, err := fieldValue(v)
		if err != nil {
			return Point{}, fmt.Errorf("line protocol: %q: field %s: %w", line, k, err)
		}
		p.Fields[unescape(k)] = val
	}
	if len(p.Fields) == 0 {
		return Point{}, fmt.Errorf("line protocol: %q: no fields", line)
	}
	if tsPart != "" {
		ns, err := strconv.ParseInt(tsPart, 10, 64)
		if err != nil {
			return Point{}, fmt.Errorf("line protocol: %q: bad timestamp", line)
		}
		p.Time = time.Unix(0, ns)
	}
	return p, nil
}

func fieldValue(v string) (any, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		if len(v) < 2 || !strings.HasSuffix(v, `"`) {
			return nil, fmt.Errorf("unterminated string")
		}
		return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1]), nil
	case strings.HasSuffix(v, "u"):
		return strconv.ParseUint(v[:len(v)-1], 10, 64)
	case strings.HasSuffix(v, "i"):
		return strconv.ParseInt(v[:len(v)-1], 10, 64)
	case v == "true" || v == "t" || v == "T" || v == "TRUE" || v == "True":
		return true, nil
	case v == "false" || v == "f" || v == "F" || v == "FALSE" || v == "False":
		return false, nil
	default:
		return strconv.ParseFloat(v, 64)
	}
}

// splitUnescaped splits s at the first sep not escaped by '\' (and, if
// quotes, not inside a double-quoted string).
func splitUnescaped(s string, sep byte, quotes bool) (string, string, error) {
	inQ := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case quotes && c == '"':
			inQ = !inQ
		case c == sep && !inQ:
			return s[:i], s[i+1:], nil
		}
	}
	if inQ {
		return "", "", fmt.Errorf("unterminated string")
	}
	return s, "", nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Uint reads an integer field (written as int, read back as int64, or an
// unsigned value from another writer) as a counter.
func Uint(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case int64:
		return uint64(max(x, 0)), x >= 0
	case float64:
		return uint64(max(x, 0)), x >= 0
	}
	return 0, false
}

// ReadLPFile calls fn for every point of a line-protocol file; a missing
// file has no points.
func ReadLPFile(path string, fn func(Point) error) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := ParseLP(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return sc.Err()
}
