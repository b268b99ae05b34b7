package reports

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ReadFlowsCSV streams flows.csv, one call of fn per row, so a run of
// millions of flows need not fit in memory. Columns after the known ones
// are ignored (a newer writer may add some).
//
// It accepts exactly what encoding/csv accepts (FuzzReadFlowsCSV checks
// that) but reads a record without quotes, the usual case, by splitting
// the line on commas and reusing the strings of repeated values, which
// makes a 10-million-row file several times faster to read. A record with
// a quote goes through encoding/csv.
func ReadFlowsCSV(r io.Reader, fn func(FlowRow) error) error {
	fr := &flowReader{br: bufio.NewReaderSize(r, 1<<20)}
	head, err := fr.record()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("flows.csv header: %w", err)
	}
	want := flowsHeader()
	if len(head) < len(want) {
		return fmt.Errorf("flows.csv header: %d columns, want %d", len(head), len(want))
	}
	for i, h := range want {
		if string(head[i]) != h {
			return fmt.Errorf("flows.csv header: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	fr.nfields = len(head)
	return fr.stream(fn)
}

// batchRows is how many rows the parser hands over at a time.
const batchRows = 4096

// stream parses in a goroutine of its own while fn consumes, so a large
// file keeps two cores busy; a few batches of rows circulate between them,
// so memory does not grow with the file.
func (fr *flowReader) stream(fn func(FlowRow) error) error {
	type batch struct {
		rows []FlowRow
		err  error // io.EOF after the last batch
	}
	batches := make(chan batch, 4)
	free := make(chan []FlowRow, 6)
	done := make(chan struct{})
	defer close(done) // stops the parser when fn fails
	go func() {
		defer close(batches)
		for {
			var rows []FlowRow
			select {
			case rows = <-free:
				rows = rows[:0]
			default:
				rows = make([]FlowRow, 0, batchRows)
			}
			var err error
			for len(rows) < batchRows {
				rec, e := fr.record()
				if e == nil {
					var row FlowRow
					if row, e = fr.row(rec); e == nil {
						rows = append(rows, row)
						continue
					}
				}
				err = e
				if !errors.Is(e, io.EOF) {
					err = fmt.Errorf("flows.csv:%d: %w", fr.start, e)
				}
				break
			}
			select {
			case batches <- batch{rows, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for b := range batches {
		for _, row := range b.rows {
			if err := fn(row); err != nil {
				return err
			}
		}
		if errors.Is(b.err, io.EOF) {
			return nil
		}
		if b.err != nil {
			return b.err
		}
		select {
		case free <- b.rows:
		default:
		}
	}
	return nil
}

// flowReader splits flows.csv into records.
type flowReader struct {
	br       *bufio.Reader
	line     int // lines read so far
	start    int // first line of the last record
	nfields  int // fields per record (the header's); 0 until known
	fields   [][]byte
	buf      []byte
	interned [len(flowsColumns)]interner
}

// flowsColumns indexes the columns that hold text.
var flowsColumns = [...]int{0, 1, 3, 5, 6, 11, 12}

// readLine returns the next line with its line ending (nil at EOF). The
// slice is valid until the next call. A last line without a newline is
// *TornLineError: a crash cut the append short, and the record it holds
// may be cut inside a field yet still parse.
func (fr *flowReader) readLine() ([]byte, error) {
	line, err := fr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		fr.buf = append(fr.buf[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = fr.br.ReadSlice('\n')
			fr.buf = append(fr.buf, line...)
		}
		line = fr.buf
	}
	if len(line) > 0 {
		fr.line++
		if errors.Is(err, io.EOF) {
			return nil, &TornLineError{Line: fr.line, Bytes: len(line)}
		}
	}
	return line, err
}

// record returns the fields of the next record, skipping empty lines as
// encoding/csv does. The fields are valid until the next call.
func (fr *flowReader) record() ([][]byte, error) {
	for {
		line, err := fr.readLine()
		if err != nil {
			return nil, err
		}
		fr.start = fr.line
		if bytes.IndexByte(line, '"') >= 0 {
			return fr.quoted(line)
		}
		// encoding/csv: a trailing "\r\n" counts as "\n".
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		fr.fields = fr.fields[:0]
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				fr.fields = append(fr.fields, line)
				break
			}
			fr.fields = append(fr.fields, line[:i])
			line = line[i+1:]
		}
		if fr.nfields > 0 && len(fr.fields) != fr.nfields {
			return nil, csv.ErrFieldCount
		}
		return fr.fields, nil
	}
}

// quoted reads a record that has a quote: lines up to the one that closes
// every quoted field (an even number of quotes, since a quote inside a
// field is doubled), parsed by encoding/csv.
func (fr *flowReader) quoted(first []byte) ([][]byte, error) {
	chunk := append([]byte(nil), first...)
	for bytes.Count(chunk, []byte{'"'})%2 == 1 {
		line, err := fr.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		chunk = append(chunk, line...)
	}
	cr := csv.NewReader(bytes.NewReader(chunk))
	cr.FieldsPerRecord = fr.nfields
	rec, err := cr.Read()
	if err == nil {
		if _, again := cr.Read(); !errors.Is(again, io.EOF) {
			err = fmt.Errorf("record ends inside a line: %w", csv.ErrQuote)
		}
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err // the line number is ours, not the chunk's
		}
		return nil, err
	}
	fr.fields = fr.fields[:0]
	for _, f := range rec {
		fr.fields = append(fr.fields, []byte(f))
	}
	return fr.fields, nil
}

// row parses one record's fields.
func (fr *flowReader) row(rec [][]byte) (FlowRow, error) {
	s := func(i int) string { return fr.interned[i].get(rec[flowsColumns[i]]) }
	row := FlowRow{Run: s(0), Point: s(1), Group: s(2), Src: s(3), Dst: s(4), Status: s(5), Tool: s(6)}
	var errs [6]error
	var id, step int64
	id, errs[0] = parseInt(rec[2], strconv.IntSize)
	step, errs[1] = parseInt(rec[4], strconv.IntSize)
	row.FlowID, row.Step = int(id), int(step)
	row.Size, errs[2] = parseInt(rec[7], 64)
	row.StartNs, errs[3] = parseInt(rec[8], 64)
	row.EndNs, errs[4] = parseInt(rec[9], 64)
	row.FCTNs, errs[5] = parseInt(rec[10], 64)
	if err := errors.Join(errs[:]...); err != nil {
		return row, err
	}
	if row.Size < 0 || row.FCTNs < 0 {
		return row, fmt.Errorf("flow %d: negative size or fct", row.FlowID)
	}
	return row, nil
}

// parseInt is strconv.ParseInt(string(b), 10, bits) without the string
// for the common case of up to 19 plain digits.
func parseInt(b []byte, bits int) (int64, error) {
	if len(b) == 0 || len(b) > 19 {
		return strconv.ParseInt(string(b), 10, bits)
	}
	var v uint64 // 19 digits fit
	for _, c := range b {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, bits)
		}
		v = v*10 + uint64(c-'0')
	}
	if v >= 1<<(bits-1) {
		return strconv.ParseInt(string(b), 10, bits) // its range error
	}
	return int64(v), nil
}

// interner reuses the strings of a column whose values repeat (run, point,
// host names, status), so reading a row allocates no strings for them. It
// remembers a bounded number of values.
type interner struct {
	last string
	seen map[string]string
}

const internMax = 4096

func (in *interner) get(b []byte) string {
	if string(b) == in.last {
		return in.last
	}
	if s, ok := in.seen[string(b)]; ok {
		in.last = s
		return s
	}
	s := string(b)
	if in.seen == nil {
		in.seen = map[string]string{}
	}
	if len(in.seen) < internMax {
		in.seen[s] = s
	}
	in.last = s
	return s
}
