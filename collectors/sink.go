package collectors

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/labctl/labctl/archive"
)

// Sink receives points.
type Sink interface {
	Write(ctx context.Context, pts []Point) error
	Close(ctx context.Context) error
}

// ArchiveSink appends points to dir/<measurement>.lp.
type ArchiveSink struct {
	dir   string
	mu    sync.Mutex
	files map[string]*os.File
	bufs  map[string]*bufio.Writer
	line  []byte // one encoded point, before it goes to its buffer
}

// NewArchiveSink writes into dir (created if needed).
func NewArchiveSink(dir string) (*ArchiveSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("telemetry archive %s: %w", dir, err)
	}
	return &ArchiveSink{dir: dir, files: map[string]*os.File{}, bufs: map[string]*bufio.Writer{}}, nil
}

// Write appends pts.
func (a *ArchiveSink) Write(_ context.Context, pts []Point) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range pts {
		w, ok := a.bufs[p.Measurement]
		if !ok {
			f, err := os.OpenFile(filepath.Join(a.dir, archive.TelemetryFileName(p.Measurement)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return fmt.Errorf("telemetry archive: %w", err)
			}
			a.files[p.Measurement], w = f, bufio.NewWriterSize(f, 256<<10)
			a.bufs[p.Measurement] = w
		}
		// A buffer goes to its file only whole lines at a time, so a
		// crash between two writes leaves whole records on disk.
		var err error
		if a.line, err = AppendLP(a.line[:0], p); err != nil {
			return fmt.Errorf("telemetry archive: %w", err)
		}
		if len(a.line) > w.Available() {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("telemetry archive: %w", err)
			}
		}
		if _, err := w.Write(a.line); err != nil {
			return fmt.Errorf("telemetry archive: %w", err)
		}
	}
	return nil
}

// Close flushes and closes the files.
func (a *ArchiveSink) Close(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for m, w := range a.bufs {
		errs = append(errs, w.Flush(), a.files[m].Close())
	}
	a.bufs, a.files = map[string]*bufio.Writer{}, map[string]*os.File{}
	return errors.Join(errs...)
}

type multi []Sink

// Multi writes to every sink; one failing does not stop the others.
func Multi(sinks ...Sink) Sink { return multi(sinks) }

func (m multi) Write(ctx context.Context, pts []Point) error {
	var errs []error
	for _, s := range m {
		errs = append(errs, s.Write(ctx, pts))
	}
	return errors.Join(errs...)
}

func (m multi) Close(ctx context.Context) error {
	var errs []error
	for _, s := range m {
		errs = append(errs, s.Close(ctx))
	}
	return errors.Join(errs...)
}
