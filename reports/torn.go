package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/labctl/labctl/collectors"
)

// TornLineError says that a file's last line has no newline: a crash cut
// an append short. Readers return it after every complete line, so the
// caller may keep what came before and warn; a bad line anywhere else is
// an ordinary error naming file:line.
type TornLineError struct {
	Line  int // the incomplete line's number
	Bytes int // how many bytes it has
}

func (e *TornLineError) Error() string {
	return fmt.Sprintf("line %d incomplete (%d bytes, no newline)", e.Line, e.Bytes)
}

// tornWarning is the report's warning for a file whose last line was cut;
// ok is false (and the warning empty) when err is not a torn line.
func tornWarning(path string, err error) (string, bool) {
	var te *TornLineError
	if !errors.As(err, &te) {
		return "", false
	}
	return fmt.Sprintf("%s: last line (%d) incomplete, %d bytes without a newline (a crash mid-append?): skipped",
		path, te.Line, te.Bytes), true
}

// readLPFile is collectors.ReadLPFile for archives: it reads complete lines
// only and ends with *TornLineError when the last one has no newline (a
// cut line may still parse, with a wrong value or timestamp, so a
// missing newline, not a parse error, is what marks it). Lines are read
// and parsed a few batches ahead of fn, on another goroutine: parsing is
// about half the cost of a report's pass over its telemetry, and fn (one
// goroutine, in file order, as before) need not wait for it.
func readLPFile(path string, fn func(collectors.Point) error) error {
	f, err := os.Open(path) // LoadRun lists the files that exist
	if err != nil {
		return err
	}
	defer f.Close()
	full := make(chan lpBatch, lpAhead)
	free := make(chan []collectors.Point, lpAhead+2)
	stop := make(chan struct{})
	go func() {
		defer close(full)
		parseLPBatches(f, path, full, free, stop)
	}()
	defer func() { // the parser stops and is gone before f closes
		close(stop)
		for range full {
		}
	}()
	for b := range full {
		for _, p := range b.points {
			if err := fn(p); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
		select {
		case free <- b.points[:0]:
		default:
		}
	}
	return nil
}

// lpAhead batches of lpBatchLen points may be parsed ahead of the reader.
const (
	lpAhead    = 4
	lpBatchLen = 1024
)

// lpBatch is parsed points in file order; err, when set, comes after them
// and ends the file.
type lpBatch struct {
	points []collectors.Point
	err    error
}

// parseLPBatches parses r's lines into batches sent on full (taking
// emptied ones back from free) until the end, an error, or stop.
func parseLPBatches(r io.Reader, path string, full chan<- lpBatch, free <-chan []collectors.Point, stop <-chan struct{}) {
	br := bufio.NewReaderSize(r, 1<<20)
	batch := make([]collectors.Point, 0, lpBatchLen)
	send := func(err error) bool {
		select {
		case full <- lpBatch{batch, err}:
		case <-stop:
			return false
		}
		select {
		case batch = <-free:
		default:
			batch = make([]collectors.Point, 0, lpBatchLen)
		}
		return true
	}
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) {
			if line != "" {
				send(&TornLineError{Line: n, Bytes: len(line)})
			} else if len(batch) > 0 {
				send(nil)
			}
			return
		}
		if err != nil {
			send(fmt.Errorf("%s:%d: %w", path, n, err))
			return
		}
		if line == "\n" || line == "\r\n" || line[0] == '#' {
			continue
		}
		p, err := collectors.ParseLP(line)
		if err != nil {
			send(fmt.Errorf("%s:%d: %w", path, n, err))
			return
		}
		if batch = append(batch, p); len(batch) == lpBatchLen && !send(nil) {
			return
		}
	}
}
