package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
)

// PointReader calls fn for every telemetry point of one line-protocol
// file. readLPFile is the default; tests or other archive
// formats may pass their own.
type PointReader func(path string, fn func(collectors.Point) error) error

// TelemetrySource streams all of a run's telemetry points, in any order.
// Analyse makes one pass over it, so telemetry never has to fit in memory.
type TelemetrySource func(fn func(collectors.Point) error) error

// FlowSource streams a run's flow rows in archive order. Analyse makes one
// pass over it, so flows never have to fit in memory.
type FlowSource func(fn func(FlowRow) error) error

// Run is what Analyse reads: the manifest, the flow rows of all points and
// the telemetry, both as streams. LoadRun fills it from an archive; tests
// may build it.
type Run struct {
	Dir       string
	Manifest  Manifest
	Flows     FlowSource      // nil: the run has no flows
	Telemetry TelemetrySource // nil: the run has no telemetry
	// Warnings are what reading the archive tolerated (a torn last line);
	// the sources add them as they stream, and the summary shows them.
	Warnings []string
}

// warn records a warning once (a source may be streamed more than once).
func (r *Run) warn(w string) {
	if !slices.Contains(r.Warnings, w) {
		r.Warnings = append(r.Warnings, w)
	}
}

// LoadRun reads the archive in dir: manifest.json now; flows.csv (absent
// on a run interrupted before traffic: no flows) and telemetry/*.lp,
// streamed through readLP (nil: readLPFile), when Analyse asks for them.
// A last line cut short by a crash (no newline) is skipped with a warning
// in Warnings; a bad line elsewhere is an error naming file:line.
func LoadRun(dir string, readLP PointReader) (*Run, error) {
	if readLP == nil {
		readLP = readLPFile
	}
	run := &Run{Dir: dir}
	ad := archive.Open(dir)
	if err := archive.ReadManifest(ad, &run.Manifest); err != nil {
		return nil, err
	}
	fpath := ad.Flows()
	switch _, err := os.Stat(fpath); {
	case errors.Is(err, fs.ErrNotExist): // interrupted before traffic: no flows
	case err != nil:
		return nil, fmt.Errorf("run archive: %w", err)
	default:
		run.Flows = func(fn func(FlowRow) error) error {
			f, err := os.Open(fpath)
			if err != nil {
				return fmt.Errorf("run archive: %w", err)
			}
			defer f.Close()
			err = ReadFlowsCSV(f, fn)
			if w, torn := tornWarning(fpath, err); torn {
				run.warn(w)
				return nil
			}
			if err != nil {
				return fmt.Errorf("run archive %s: %w", fpath, err)
			}
			return nil
		}
	}
	files, err := ad.TelemetryFiles()
	if err != nil {
		return nil, err
	}
	run.Telemetry = func(fn func(collectors.Point) error) error {
		for _, path := range files {
			err := readLP(path, fn)
			if w, torn := tornWarning(path, err); torn {
				run.warn(w)
				continue
			}
			if err != nil {
				return fmt.Errorf("telemetry %s: %w", path, err)
			}
		}
		return nil
	}
	return run, nil
}
