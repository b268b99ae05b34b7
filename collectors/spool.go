package collectors

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Spool holds points InfluxDB has not acknowledged yet, on disk, until a
// replay writes them. It is a directory of segment files
// (seg-NNNNNN.lp, line protocol, appended one whole batch per write so a
// crash tears at most the last line) and, beside each, the byte offset up
// to which InfluxDB acknowledged it (seg-NNNNNN.ack, replaced by rename,
// so it is either the old or the new offset). A replay starts at the
// committed offset, so no acknowledged point is sent again; a crash
// between a write and its commit resends that one batch, which InfluxDB
// stores once (a point is keyed by measurement, tags and time: writing it
// again overwrites it with the same values).
//
// One process at a time: OpenSpool takes an exclusive lock on the
// directory, so `labctl telemetry replay` cannot race a live run's own
// replay.
type Spool struct {
	dir  string
	lock *os.File

	mu      sync.Mutex
	cur     *os.File // segment being appended, nil: none open
	curSeq  int
	curN    int // lines in cur
	next    int // sequence of the next segment
	pending int // points appended and not acknowledged
	torn    int // torn last lines skipped by replays
	closed  bool
}

// SegmentPoints bounds a segment, so a replay commits and deletes
// progress in steps of bounded size.
const SegmentPoints = 20000

// ErrSpoolBusy: another process holds the spool.
var ErrSpoolBusy = errors.New("spool is in use by another process")

// OpenSpool opens (creating) the spool in dir and counts what it holds.
func OpenSpool(dir string) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("spool %s: %w (%v)", dir, ErrSpoolBusy, err)
	}
	s := &Spool{dir: dir, lock: lock, next: 1}
	segs, err := s.segments()
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, seq := range segs {
		s.next = max(s.next, seq+1)
		n, _, err := s.count(seq)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.pending += n
	}
	return s, nil
}

// Dir is where the spool lives.
func (s *Spool) Dir() string { return s.dir }

func (s *Spool) segPath(seq int) string { return filepath.Join(s.dir, fmt.Sprintf("seg-%06d.lp", seq)) }
func (s *Spool) ackPath(seq int) string {
	return filepath.Join(s.dir, fmt.Sprintf("seg-%06d.ack", seq))
}

// segments lists the segment sequence numbers in order.
func (s *Spool) segments() ([]int, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "seg-*.lp"))
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", s.dir, err)
	}
	var out []int
	for _, n := range names {
		seq, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "seg-"), ".lp"))
		if err == nil {
			out = append(out, seq)
		}
	}
	sort.Ints(out)
	return out, nil
}

// acked is a segment's committed offset (0 when none was committed).
func (s *Spool) acked(seq int) (int64, error) {
	b, err := os.ReadFile(s.ackPath(seq))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	off, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("spool %s: bad offset %q", s.ackPath(seq), b)
	}
	return off, nil
}

// commit records that seq is acknowledged up to off: written to a
// temporary file, synced and renamed over the old offset.
func (s *Spool) commit(seq int, off int64) error {
	tmp := s.ackPath(seq) + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	_, err = f.WriteString(strconv.FormatInt(off, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.ackPath(seq))
	}
	if err != nil {
		return fmt.Errorf("spool: commit %s: %w", s.ackPath(seq), err)
	}
	return nil
}

// count is how many whole points of seq lie past its committed offset,
// and whether its last line is torn.
func (s *Spool) count(seq int) (int, bool, error) {
	off, err := s.acked(seq)
	if err != nil {
		return 0, false, err
	}
	f, err := os.Open(s.segPath(seq))
	if err != nil {
		return 0, false, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, false, fmt.Errorf("spool: %w", err)
	}
	n, torn := 0, false
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			n++
		} else if len(bytes.TrimSpace(line)) > 0 {
			torn = true
		}
		if err == io.EOF {
			return n, torn, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("spool %s: %w", s.segPath(seq), err)
		}
	}
}

// Append adds pts to the spool in one write.
func (s *Spool) Append(pts []Point) error {
	var b bytes.Buffer
	for _, p := range pts {
		if err := EncodeLP(&b, p); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("spool %s: closed", s.dir)
	}
	if s.cur == nil {
		f, err := os.OpenFile(s.segPath(s.next), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		s.cur, s.curSeq, s.curN = f, s.next, 0
		s.next++
	}
	if _, err := s.cur.Write(b.Bytes()); err != nil {
		return fmt.Errorf("spool %s: %w", s.cur.Name(), err)
	}
	s.pending += len(pts)
	s.curN += len(pts)
	if s.curN >= SegmentPoints {
		s.sealLocked()
	}
	return nil
}

// sealLocked closes the open segment: the next Append starts another.
func (s *Spool) sealLocked() {
	if s.cur != nil {
		_ = s.cur.Close()
		s.cur = nil
	}
}

// Pending is how many points wait for a replay.
func (s *Spool) Pending() int { s.mu.Lock(); defer s.mu.Unlock(); return s.pending }

// Torn is how many torn last lines (a crash cut them) replays skipped:
// those points are not in InfluxDB (the archive has them).
func (s *Spool) Torn() int { s.mu.Lock(); defer s.mu.Unlock(); return s.torn }

// Replay writes every pending point through write, batch points at a
// time, committing each batch's end once write returned nil and deleting
// a segment once all of it is acknowledged. It stops at the first error
// (what is left stays for the next replay) and returns how many points
// were acknowledged.
func (s *Spool) Replay(ctx context.Context, batch int, write func(context.Context, []Point) error) (int, error) {
	s.mu.Lock()
	s.sealLocked() // appends from now on go to a new segment
	s.mu.Unlock()
	segs, err := s.segments()
	if err != nil {
		return 0, err
	}
	done := 0
	for _, seq := range segs {
		s.mu.Lock()
		open := s.cur != nil && s.curSeq == seq
		s.mu.Unlock()
		if open {
			break // appended since the seal: the next replay takes it
		}
		n, err := s.replaySegment(ctx, seq, max(batch, 1), write)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (s *Spool) replaySegment(ctx context.Context, seq, batch int, write func(context.Context, []Point) error) (int, error) {
	off, err := s.acked(seq)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(s.segPath(seq))
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	r := bufio.NewReaderSize(f, 256<<10)
	done := 0
	var pts []Point
	end := off
	flush := func() error {
		if len(pts) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := write(ctx, pts); err != nil {
			return err
		}
		if err := s.commit(seq, end); err != nil {
			return err
		}
		s.mu.Lock()
		s.pending -= len(pts)
		s.mu.Unlock()
		done += len(pts)
		pts = pts[:0]
		return nil
	}
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			p, err := ParseLP(string(line))
			if err != nil {
				return done, fmt.Errorf("spool %s at byte %d: %w", s.segPath(seq), end, err)
			}
			end += int64(len(line))
			pts = append(pts, p)
			if len(pts) >= batch {
				if err := flush(); err != nil {
					return done, err
				}
			}
		} else if len(bytes.TrimSpace(line)) > 0 {
			s.mu.Lock()
			s.torn++
			s.mu.Unlock()
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return done, fmt.Errorf("spool %s: %w", s.segPath(seq), rerr)
		}
	}
	if err := flush(); err != nil {
		return done, err
	}
	// All acknowledged: the segment goes first, so a crash here leaves at
	// most an offset file without a segment, which nothing reads.
	if err := os.Remove(s.segPath(seq)); err != nil {
		return done, fmt.Errorf("spool: %w", err)
	}
	_ = os.Remove(s.ackPath(seq))
	return done, nil
}

// Close releases the spool (what it holds stays on disk).
func (s *Spool) Close() error {
	s.mu.Lock()
	s.sealLocked()
	s.closed = true
	s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	_ = syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	err := s.lock.Close()
	s.lock = nil
	return err
}
