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
// missing newline, not a parse error, is what marks it).
func readLPFile(path string, fn func(collectors.Point) error) error {
	f, err := os.Open(path) // LoadRun lists the files that exist
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) {
			if line != "" {
				return &TornLineError{Line: n, Bytes: len(line)}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if line == "\n" || line == "\r\n" || line[0] == '#' {
			continue
		}
		p, err := collectors.ParseLP(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
}
