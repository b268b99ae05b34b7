package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Dir is one run directory (runs/<run-id>/), or one point's part of it
// (Part). Its methods name the files; the helpers in this package write
// them whole. A Dir is a path: it is cheap to copy and opening one does
// no I/O.
type Dir struct{ path string }

// Open is the run directory at path (which need not exist yet).
func Open(path string) Dir { return Dir{filepath.Clean(path)} }

// Create makes the run directory at path with the subdirectories every run
// writes into (raw/, telemetry/).
func Create(path string) (Dir, error) {
	d := Open(path)
	for _, sub := range []string{d.Raw(), d.Telemetry()} {
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return d, fmt.Errorf("run archive: %w", err)
		}
	}
	return d, nil
}

// Path is the directory itself.
func (d Dir) Path() string { return d.path }

// ID is the run's ID: the directory's name.
func (d Dir) ID() string { return filepath.Base(d.path) }

func (d Dir) join(elem ...string) string { return filepath.Join(append([]string{d.path}, elem...)...) }

// Manifest is manifest.json: what ran, where the run is or stopped
// (ReadManifest, WriteManifest).
func (d Dir) Manifest() string { return d.join("manifest.json") }

// HasManifest says whether the manifest exists: a run was started here,
// or a point's part (Part) is whole.
func (d Dir) HasManifest() bool {
	_, err := os.Stat(d.Manifest())
	return err == nil
}

// Plan is plan.json: the points the run planned, in order.
func (d Dir) Plan() string { return d.join("plan.json") }

// ExecutorJob is executor.json: what a run started on an executor needs to
// be resumed or to run one point.
func (d Dir) ExecutorJob() string { return d.join("executor.json") }

// Flows is flows.csv: one row per flow of every point.
func (d Dir) Flows() string { return d.join("flows.csv") }

// Summary is summary.json: the analysed run.
func (d Dir) Summary() string { return d.join("summary.json") }

// HasSummary says whether the run reached its report.
func (d Dir) HasSummary() (bool, error) {
	_, err := os.Stat(d.Summary())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ReportHTML is report.html, the self-contained report.
func (d Dir) ReportHTML() string { return d.join("report.html") }

// Telemetry is telemetry/: one line-protocol file per measurement
// (TelemetryFile).
func (d Dir) Telemetry() string { return d.join("telemetry") }

// TelemetryFile is the line-protocol file of a measurement under
// telemetry/.
func (d Dir) TelemetryFile(measurement string) string {
	return filepath.Join(d.Telemetry(), TelemetryFileName(measurement))
}

// TelemetryFileName is the name of a measurement's line-protocol file in
// a telemetry directory.
func TelemetryFileName(measurement string) string { return filepath.Base(measurement) + ".lp" }

// TelemetryFiles are the line-protocol files under telemetry/, sorted; none
// when the directory is missing.
func (d Dir) TelemetryFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(d.Telemetry(), "*.lp"))
	if err != nil {
		return nil, fmt.Errorf("run archive %s: %w", d.path, err)
	}
	sort.Strings(files)
	return files, nil
}

// Raw is raw/: per point, its schedule and each host's agent output and
// result, verbatim.
func (d Dir) Raw() string { return d.join("raw") }

// RawPoint is raw/<point>/.
func (d Dir) RawPoint(point string) string { return filepath.Join(d.Raw(), SafeName(point)) }

// Schedule is raw/<point>/schedule.json, the point's whole schedule.
func (d Dir) Schedule(point string) string { return filepath.Join(d.RawPoint(point), "schedule.json") }

// ScheduleRel is Schedule relative to the run directory, with slashes, as
// plan.json records it.
func ScheduleRel(point string) string { return path.Join("raw", SafeName(point), "schedule.json") }

// AgentLog is raw/<point>/<host>.agent.log, the agent's own output.
func (d Dir) AgentLog(point, host string) string {
	return filepath.Join(d.RawPoint(point), host+".agent.log")
}

// AgentResult is raw/<point>/<host>.result.json.gz, the agent's gzipped
// per-flow results as fetched from the host.
func (d Dir) AgentResult(point, host string) string {
	return filepath.Join(d.RawPoint(point), host+".result.json.gz")
}

// Spool is spool/influx/: telemetry InfluxDB has not acknowledged, waiting
// for a replay. It lies outside telemetry/ so the report, which reads
// telemetry/, never counts those points twice.
func (d Dir) Spool() string { return d.join("spool", "influx") }

// Points is points/, where an executor's points keep their parts.
func (d Dir) Points() string { return d.join("points") }

// Part is points/<i>/, point i's result as a run directory of its own; it
// appears whole (renamed from PartTemp) or not at all.
func (d Dir) Part(i int) Dir { return Dir{filepath.Join(d.Points(), strconv.Itoa(i))} }

// PartTemp is where a try of point i writes before its part is renamed
// into place; tag tells tries apart.
func (d Dir) PartTemp(i int, tag string) Dir {
	return Dir{filepath.Join(d.Points(), fmt.Sprintf(".%d.%s", i, tag))}
}

// SafeName is a point's or variant's name as a single path element.
func SafeName(name string) string { return strings.ReplaceAll(name, "/", "_") }

// List is the run directories under out: those with a manifest, in name
// order.
func List(out string) ([]Dir, error) {
	paths, err := filepath.Glob(filepath.Join(out, "*", "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("runs %s: %w", out, err)
	}
	dirs := make([]Dir, len(paths))
	for i, p := range paths {
		dirs[i] = Open(filepath.Dir(p))
	}
	return dirs, nil
}
