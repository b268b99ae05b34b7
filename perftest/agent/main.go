package agent

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/labctl/labctl/perftest"
)

// Env is where the agent's command runs. On a real host (LocalEnv) files
// are the host's and flows run as perftest processes; an emulated host
// maps files into its own root and has its fabric twin run the flows. Up
// to Execute both run the same code: Main.
type Env struct {
	Stdout, Stderr io.Writer
	// File maps a path named on the command line to the file it is.
	File func(string) string
	// Execute runs this host's part of s and streams its Result to w
	// (NewResultWriter); the error is the run's.
	Execute func(ctx context.Context, s *perftest.Schedule, o Options, w io.Writer) error
	// Executable is the running program's content and BinaryDir the
	// directory it was run from, verified under --sha256 (verifySelf).
	Executable, BinaryDir string
	// Sum, when set, gives a file's SHA-256 (hex) for that check: an
	// emulated lab answers from the digests it keeps by file version (its
	// hosts share one stored agent); nil hashes the file.
	Sum func(file string) (string, error)
	// Compressors, when set, lends the gzip writers for results (an
	// emulated lab, whose hosts share one process, reuses a few); nil
	// makes one per result.
	Compressors Compressors
}

// Compressors lends gzip writers, reset onto w, and takes them back
// (any gzip writer: the emulated lab lends faster ones than the standard
// library's, which the agent binary keeps to).
type Compressors interface {
	Get(w io.Writer) io.WriteCloser
	Put(zw io.WriteCloser)
}

// LocalEnv runs flows as perftest processes on this host (Run).
func LocalEnv(stdout, stderr io.Writer) Env {
	dir := ""
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
	}
	return Env{Stdout: stdout, Stderr: stderr, File: func(p string) string { return p }, Execute: executeLocal,
		Executable: "/proc/self/exe", BinaryDir: dir}
}

func executeLocal(ctx context.Context, s *perftest.Schedule, o Options, w io.Writer) error {
	res, runErr := Run(ctx, s, o)
	if res != nil {
		if err := writeResult(w, res); err != nil {
			return err
		}
	}
	return runErr
}

// Usage is the agent's command line.
const Usage = "run --schedule FILE --host NAME --out FILE [--max-concurrent N] [--sha256 SUM]"

// Main runs the agent's command line (without the program name):
//
//	run --schedule FILE --host NAME --out FILE [--max-concurrent N] [--sha256 SUM]
//
// With --sha256 it first verifies that it is the binary labctl shipped,
// in directories only its user can write (verifySelf). It reads this host's part of a point's schedule, runs it and writes the
// result JSON to --out; it returns the exit status (2: usage).
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintln(env.Stderr, "usage: labctl-agent", Usage)
		return 2
	}
	fs := flag.NewFlagSet("labctl-agent run", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	schedPath := fs.String("schedule", "", "this host's part of a point's schedule (JSON)")
	self := fs.String("host", "", "this host's name in the schedule")
	out := fs.String("out", "", "where to write the result JSON (gzipped when the name ends in .gz)")
	maxConc := fs.Int("max-concurrent", 0, "run at most this many perftest clients at once (0: no bound); later flows start late")
	sum := fs.String("sha256", "", "refuse to run unless this binary's SHA-256 is this (hex) and its directories are the user's alone")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *sum != "" {
		if err := verifySelf(env.Executable, env.BinaryDir, *sum, env.Sum); err != nil {
			fmt.Fprintln(env.Stderr, "labctl-agent:", err)
			return 1
		}
	}
	if *schedPath == "" || *out == "" || *self == "" {
		fmt.Fprintln(env.Stderr, "labctl-agent run: --schedule, --host and --out are required")
		return 2
	}
	s, err := ReadSchedule(env.File(*schedPath))
	if err == nil && s.Host != "" && s.Host != *self {
		err = fmt.Errorf("it is host %s's part, not %s's", s.Host, *self)
	}
	if err == nil && s.HostFlows != 0 && s.HostFlows != len(s.Flows) {
		err = fmt.Errorf("it announces %d flows and holds %d", s.HostFlows, len(s.Flows))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "labctl-agent: schedule %s: %v\n", *schedPath, err)
		return 1
	}
	o := Options{Self: *self, MaxConcurrent: *maxConc, Logger: slog.New(slog.NewTextHandler(env.Stderr, nil))}
	if err := executeTo(ctx, env, env.File(*out), s, o); err != nil {
		fmt.Fprintf(env.Stderr, "labctl-agent %s: %v\n", *self, err)
		return 1
	}
	return 0
}

// executeTo runs s with env and writes its result to file (gzipped when
// its name ends in .gz, Compressed), through file+".part" renamed once the
// result is closed: a killed agent leaves a .part, never a truncated
// result under the name labctl fetches.
func executeTo(ctx context.Context, env Env, file string, s *perftest.Schedule, o Options) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	part := file + ".part"
	f, err := os.Create(part)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *lazyGzip
	if Compressed(file) {
		zw = &lazyGzip{f: f, c: env.Compressors}
		w = zw
	}
	runErr := env.Execute(ctx, s, o, w)
	if zw != nil {
		if err := zw.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("agent result %s: %w", file, err)
		}
	}
	err = f.Close()
	if err == nil {
		err = os.Rename(part, file)
	}
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("agent result %s: %w", file, err)
	}
	return runErr
}

// lazyGzip gzips onto f with a writer taken at the first Write (from c
// when set), so a result's compressor (~1 MB) exists while the result is
// written, not while its flows run.
type lazyGzip struct {
	f  io.Writer
	c  Compressors
	zw io.WriteCloser
}

func (l *lazyGzip) Write(p []byte) (int, error) {
	if l.zw == nil {
		if l.c != nil {
			l.zw = l.c.Get(l.f)
		} else {
			l.zw, _ = gzip.NewWriterLevel(l.f, gzip.BestSpeed) // the level is valid
		}
	}
	return l.zw.Write(p)
}

// Close ends the gzip stream (an empty one if nothing was written) and
// gives the writer back.
func (l *lazyGzip) Close() error {
	if l.zw == nil {
		if _, err := l.Write(nil); err != nil {
			return err
		}
	}
	err := l.zw.Close()
	if l.c != nil {
		l.c.Put(l.zw)
	}
	l.zw = nil
	return err
}

// Compressed says whether a result file is gzipped: its name ends in .gz.
// A point's results hold every flow's verbatim perftest output, ~3 KB a
// flow, which gzip shrinks about twelvefold: the runner asks for gzipped
// results, so fewer bytes cross SFTP and the archive stays small.
func Compressed(file string) bool { return strings.HasSuffix(file, ".gz") }

// OpenResult opens a result file for ReadResult, through gzip when it is
// Compressed; closing the returned reader closes the file.
func OpenResult(file string) (io.ReadCloser, error) {
	f, err := os.Open(file)
	if err != nil || !Compressed(file) {
		return f, err
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return gzipFile{zr, f}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error { g.Reader.Close(); return g.f.Close() }

// ReadSchedule reads a schedule's JSON file (as json.Decoder.Decode
// reads its first value, decoded by hand: decode.go).
func ReadSchedule(file string) (*perftest.Schedule, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSchedule(f)
}

func readSchedule(r io.Reader) (*perftest.Schedule, error) {
	var s perftest.Schedule
	if err := newScanner(r).schedule(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
