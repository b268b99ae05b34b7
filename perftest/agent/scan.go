package agent

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// scanner reads JSON from a stream a token at a time, for the decoders of
// agent results and schedules (decode.go): encoding/json's Decoder takes
// ~5 CPU-seconds to read a 128-host point's results and schedules, most
// of it in its token machinery and reflection. It accepts what
// encoding/json accepts (strict JSON syntax, checked everywhere, skipped
// values included) and hands the unusual (strings with escapes or
// non-ASCII) to encoding/json, so values decode as json.Unmarshal decodes
// them; FuzzReadResult and FuzzReadSchedule hold it to that.
type scanner struct {
	r   io.Reader
	buf []byte // buf[pos:] is read and not yet scanned
	pos int
	// mark, when >= 0, is where a value being kept (raw) starts: fill
	// keeps buf from there.
	mark int
	err  error // the reader's, once it returned one
	// strs holds the short strings read, each once.
	strs map[string]string
}

// maxInterned is the longest string value kept in scanner.strs.
const maxInterned = 64

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 0, 64<<10), mark: -1}
}

// fill reads more into buf, keeping what is unscanned (or marked), and
// returns by how many bytes what was kept moved down (a caller's indexes
// into buf shift by as much); ok is false when the reader has no more.
func (s *scanner) fill() (shift int, ok bool) {
	if s.err != nil {
		return 0, false
	}
	keep := s.pos
	if s.mark >= 0 {
		keep = s.mark
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.pos -= keep
		if s.mark >= 0 {
			s.mark = 0
		}
	}
	if len(s.buf) == cap(s.buf) {
		nb := make([]byte, len(s.buf), 2*cap(s.buf))
		copy(nb, s.buf)
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.err = err
		}
		if n > 0 || err != nil {
			return keep, n > 0
		}
	}
}

// fail is the error for input that ends or breaks where a value was due.
func (s *scanner) fail() error {
	if s.pos >= len(s.buf) {
		if s.err == nil || s.err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return s.err
	}
	return fmt.Errorf("%w: unexpected %q", errSyntax, s.buf[s.pos])
}

// peek skips white space and returns the next byte, unscanned.
func (s *scanner) peek() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if _, ok := s.fill(); !ok {
			return 0, s.fail()
		}
	}
}

// expect scans the byte c.
func (s *scanner) expect(c byte) error {
	if got, err := s.peek(); err != nil || got != c {
		return s.fail()
	}
	s.pos++
	return nil
}

// next scans a ',' and returns true, or the closing byte and false.
func (s *scanner) next(closing byte) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	if c != ',' && c != closing {
		return false, s.fail()
	}
	s.pos++
	return c == ',', nil
}

// open scans the opening of an object or list (c: '{' or '[') and
// returns whether it has members: false for an empty one, whose closing
// it scans too.
func (s *scanner) open(c, closing byte) (bool, error) {
	if err := s.expect(c); err != nil {
		return false, err
	}
	got, err := s.peek()
	if err != nil {
		return false, err
	}
	if got == closing {
		s.pos++
		return false, nil
	}
	return true, nil
}

// plainByte marks the bytes a string holds as they are: printable ASCII
// but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString scans the string at pos (checked as JSON) and returns it as
// buf[start:end], quotes included; plain is false when it holds escapes
// or non-ASCII, which encoding/json decodes (unquote). The slice is valid
// until the scanner reads on.
func (s *scanner) scanString() (start, end int, plain bool, err error) {
	if c, err := s.peek(); err != nil || c != '"' {
		return 0, 0, false, s.fail()
	}
	i, plain := s.pos+1, true
	for {
		i = plainRun(s.buf, i)
		if i+6 > len(s.buf) && s.err == nil { // room for an escape's \uXXXX
			shift, _ := s.fill()
			i -= shift
			continue
		}
		if i >= len(s.buf) {
			s.pos = i
			return 0, 0, false, s.fail()
		}
		switch c := s.buf[i]; {
		case c == '"':
			start, s.pos = s.pos, i+1
			return start, i + 1, plain, nil
		case c == '\\':
			plain = false
			n := escapeLen(s.buf[i:])
			if n == 0 {
				s.pos = i
				return 0, 0, false, fmt.Errorf("%w: bad escape in a string", errSyntax)
			}
			i += n
		case c < 0x20:
			s.pos = i
			return 0, 0, false, fmt.Errorf("%w: control character in a string", errSyntax)
		default: // non-ASCII: encoding/json replaces invalid UTF-8
			plain = false
			i++
		}
	}
}

// plainRun returns the index of the first byte from i in b that is not
// plainByte (len(b) if none), eight bytes at a time while none is: a
// point's results are mostly perftest outputs to scan past.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		// A byte below 0x20, a quote, a backslash, or non-ASCII
		// (has-less-than and has-zero-byte bit tricks; a false mark
		// can follow a true one only, and the bytes are then checked
		// one by one).
		if ((x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs|x)&highs != 0 {
			break
		}
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	return i
}

// escapeLen is the length of the escape b starts with, 0 if it is none.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, h := range b[2:6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// str scans a string value.
func (s *scanner) str() (string, error) {
	start, end, plain, err := s.scanString()
	if err != nil {
		return "", err
	}
	if plain {
		b := s.buf[start+1 : end-1]
		if len(b) > maxInterned {
			return string(b), nil
		}
		// Hosts, devices, tools and statuses repeat in every flow: one
		// string each.
		v, ok := s.strs[string(b)]
		if !ok {
			if s.strs == nil {
				s.strs = map[string]string{}
			}
			v = string(b)
			s.strs[v] = v
		}
		return v, nil
	}
	var v string
	err = json.Unmarshal(s.buf[start:end], &v)
	return v, err
}

// key scans an object's key and its colon. The key is valid until the
// scanner reads on (a plain one is a view of buf).
func (s *scanner) key() ([]byte, error) {
	start, end, plain, err := s.scanString()
	if err != nil {
		return nil, err
	}
	k := s.buf[start+1 : end-1]
	if !plain {
		var v string
		if err := json.Unmarshal(s.buf[start:end], &v); err != nil {
			return nil, err
		}
		k = []byte(v)
	}
	return k, s.expect(':')
}

// number scans a number and returns its text, a view of buf valid until
// the scanner reads on.
func (s *scanner) number() ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, err
	}
	i := s.pos
	for {
		for i < len(s.buf) && numberByte(s.buf[i]) {
			i++
		}
		if i < len(s.buf) {
			break
		}
		shift, ok := s.fill()
		i -= shift
		if !ok {
			break
		}
	}
	lit := s.buf[s.pos:i]
	if !validNumber(lit) {
		return nil, s.fail()
	}
	s.pos = i
	return lit, nil
}

func numberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber checks JSON's number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	digits := func(b []byte) ([]byte, bool) {
		n := 0
		for n < len(b) && '0' <= b[n] && b[n] <= '9' {
			n++
		}
		return b[n:], n > 0
	}
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '0' {
		b = b[1:]
	} else {
		var ok bool
		if b, ok = digits(b); !ok {
			return false
		}
	}
	if len(b) > 0 && b[0] == '.' {
		var ok bool
		if b, ok = digits(b[1:]); !ok {
			return false
		}
	}
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
			b = b[1:]
		}
		var ok bool
		if b, ok = digits(b); !ok {
			return false
		}
	}
	return len(b) == 0
}

// null scans a null if one is next and says whether it was.
func (s *scanner) null() (bool, error) {
	c, err := s.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, s.literal("null")
}

// literal scans the word w (true, false, null).
func (s *scanner) literal(w string) error {
	for len(s.buf)-s.pos < len(w) {
		if _, ok := s.fill(); !ok {
			break
		}
	}
	if !bytes.HasPrefix(s.buf[s.pos:], []byte(w)) {
		return s.fail()
	}
	s.pos += len(w)
	return nil
}

// skip scans any value, checked as JSON.
func (s *scanner) skip(depth int) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		_, _, _, err = s.scanString()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, err = s.number()
		return err
	case c != '{' && c != '[':
		return s.fail()
	}
	if depth >= maxDepth {
		return fmt.Errorf("%w: nested too deep", errSyntax)
	}
	closing := byte(']')
	if c == '{' {
		closing = '}'
	}
	more, err := s.open(c, closing)
	for more && err == nil {
		if c == '{' {
			if _, err = s.key(); err != nil {
				return err
			}
		}
		if err = s.skip(depth + 1); err == nil {
			more, err = s.next(closing)
		}
	}
	return err
}

// raw scans any value and returns a copy of its text.
func (s *scanner) raw() ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, err
	}
	s.mark = s.pos
	defer func() { s.mark = -1 }()
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return bytes.Clone(s.buf[s.mark:s.pos]), nil
}

// scalar peeks at a field's value: it scans a null (which leaves a field
// as it is, as encoding/json does) and returns false, refuses a value
// whose first byte is not what the field takes (first), and otherwise
// returns true with the value unscanned.
func (s *scanner) scalar(first func(byte) bool, want string) (bool, error) {
	c, err := s.peek()
	switch {
	case err != nil:
		return false, err
	case c == 'n':
		return false, s.literal("null")
	case !first(c):
		return false, s.typeError(c, want)
	}
	return true, nil
}

func numberStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

func stringStart(c byte) bool { return c == '"' }

// int64Value scans a number into *v as encoding/json would decode it into
// an integer field: null leaves *v as it is; a fraction, an exponent or
// another type is an error.
func (s *scanner) int64Value(v *int64) error {
	if ok, err := s.scalar(numberStart, "integer"); !ok {
		return err
	}
	lit, err := s.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil {
		return fmt.Errorf("number %s: not an integer", lit)
	}
	*v = n
	return nil
}

func (s *scanner) intValue(v *int) error {
	n := int64(*v)
	err := s.int64Value(&n)
	*v = int(n)
	return err
}

// float64Value scans a number into *v (null leaves it as it is).
func (s *scanner) float64Value(v *float64) error {
	if ok, err := s.scalar(numberStart, "number"); !ok {
		return err
	}
	lit, err := s.number()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return fmt.Errorf("number %s: %w", lit, err)
	}
	*v = f
	return nil
}

// stringValue scans a string into *v (null leaves it as it is).
func (s *scanner) stringValue(v *string) error {
	if ok, err := s.scalar(stringStart, "string"); !ok {
		return err
	}
	var err error
	*v, err = s.str()
	return err
}

// typeError is the error for a value of the wrong type; like
// encoding/json's, it comes only once the value is known to be valid.
func (s *scanner) typeError(c byte, want string) error {
	if err := s.skip(0); err != nil {
		return err
	}
	return fmt.Errorf("cannot decode a value starting %q into a %s", c, want)
}

// field is the index of key among names: the exact name, else one equal
// under Unicode case folding (as encoding/json matches), else -1. Keys
// come in the order of names as written, so the one after last (the
// previous key's index) is tried first.
func field(key []byte, names []string, last int) int {
	if next := last + 1; next >= 0 && next < len(names) && string(key) == names[next] {
		return next
	}
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for i, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return i
		}
	}
	return -1
}
