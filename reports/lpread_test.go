package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/collectors"
)

// TestReadLPFileInOrderAndStops: the reader parses ahead of its caller,
// in batches, yet hands every point over in file order; a bad line is an
// error naming file:line after every point before it; and a caller that
// stops (fn's error) gets its own error back at once, however much of
// the file is left.
func TestReadLPFileInOrderAndStops(t *testing.T) {
	t.Parallel()
	const lines = 3*lpBatchLen*lpAhead + 17 // more than the parser may run ahead
	var sb strings.Builder
	for i := range lines {
		fmt.Fprintf(&sb, "port,device=s1,port=p%d tx_bytes=%du %d\n", i%7, i, 1_000_000+i)
	}
	good := filepath.Join(t.TempDir(), "port.lp")
	if err := os.WriteFile(good, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "port.lp")
	if err := os.WriteFile(bad, []byte(sb.String()+"port,device=s1 oops\n"+sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	next := 0
	err := readLPFile(good, func(p collectors.Point) error {
		if v, _ := collectors.Uint(p.Fields["tx_bytes"]); v != uint64(next) || p.Time.UnixNano() != int64(1_000_000+next) {
			return fmt.Errorf("point %d: tx_bytes %d at %d", next, v, p.Time.UnixNano())
		}
		next++
		return nil
	})
	if err != nil || next != lines {
		t.Fatalf("read %d of %d points in order, err %v", next, lines, err)
	}

	next = 0
	err = readLPFile(bad, func(collectors.Point) error { next++; return nil })
	if want := fmt.Sprintf("%s:%d:", bad, lines+1); err == nil || !strings.Contains(err.Error(), want) || next != lines {
		t.Fatalf("bad line: %d points then %v, want %d points then an error naming %s", next, err, lines, want)
	}

	stop := errors.New("enough")
	next = 0
	err = readLPFile(good, func(collectors.Point) error {
		if next++; next == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || next != 10 {
		t.Fatalf("caller stopping at point 10: %d points, err %v", next, err)
	}
}
