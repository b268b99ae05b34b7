package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/labctl/labctl/perftest"
)

// Result is what an agent reports. Its JSON keeps the fields a reader
// needs to interpret the records (host, epoch, tolerance) before them and
// the tallies over all records after them, so that results with thousands
// of flows and their verbatim outputs can be written and read a record at
// a time (ResultWriter, ReadResult).
type Result struct {
	Host       string `json:"host"`
	ScheduleID string `json:"schedule_id"`
	// EpochNs is the time the flows' offsets count from (unix ns): the
	// schedule's epoch, or where an emulated lab's twin put it.
	EpochNs         int64                 `json:"epoch_ns"`
	LateToleranceNs int64                 `json:"late_tolerance_ns"`
	MaxConcurrent   int                   `json:"max_concurrent,omitempty"`
	Records         []perftest.FlowRecord `json:"records"` // flows this host sent
	Servers         []ServerRun           `json:"servers"` // flows it received
	// Late counts the flows without dependencies whose client started more
	// than LateToleranceNs after epoch+offset (each record's LagNs says by
	// how much; MaxLagNs is the largest): the host could not start flows
	// as fast as the schedule asked (process start cost, MaxConcurrent).
	Late     int   `json:"late"`
	MaxLagNs int64 `json:"max_lag_ns"`
}

// ServerRun is a server side's output. StartNs and EndNs (unix ns) say
// when the server process ran; 0 when it was never started.
type ServerRun struct {
	FlowID   int    `json:"flow_id"`
	Output   string `json:"output"`
	Stderr   string `json:"stderr,omitempty"`
	ExitCode int    `json:"exit_code"`
	StartNs  int64  `json:"start_ns,omitempty"`
	EndNs    int64  `json:"end_ns,omitempty"`
}

// lateness counts late records as they are written or read.
type lateness struct {
	tolerance int64
	late      int
	maxLag    int64
}

func (l *lateness) add(rec perftest.FlowRecord) {
	l.maxLag = max(l.maxLag, rec.LagNs)
	if rec.LagNs > l.tolerance {
		l.late++
	}
}

// countLate fills Late and MaxLagNs from the records' LagNs.
func (r *Result) countLate(tolerance time.Duration) {
	l := lateness{tolerance: tolerance.Nanoseconds()}
	for _, rec := range r.Records {
		l.add(rec)
	}
	r.Late, r.MaxLagNs, r.LateToleranceNs = l.late, l.maxLag, l.tolerance
}

// ResultWriter writes a Result's JSON a record and a server run at a time,
// byte for byte as json.Marshal would write the whole Result (without
// indentation; encode.go appends the items), and counts the late records
// on the way.
type ResultWriter struct {
	w     *bufio.Writer
	n     int // items written in the open list
	state int // 0 records, 1 servers, 2 closed
	late  lateness
	err   error
	buf   []byte // an item's JSON (appendRecord, appendServer), reused
}

// NewResultWriter starts a result on w with head's host, schedule, epoch,
// tolerance and bound (its records, servers and tallies are ignored).
func NewResultWriter(w io.Writer, head Result) *ResultWriter {
	rw := &ResultWriter{w: bufio.NewWriterSize(w, 64<<10), late: lateness{tolerance: head.LateToleranceNs}}
	b, err := json.Marshal(Result{Host: head.Host, ScheduleID: head.ScheduleID, EpochNs: head.EpochNs,
		LateToleranceNs: head.LateToleranceNs, MaxConcurrent: head.MaxConcurrent})
	if err != nil {
		rw.err = err
		return rw
	}
	// The head is the Marshal of a Result without records: cut it before
	// its "records" key and go on from there.
	head0, _, _ := strings.Cut(string(b), `"records":`)
	rw.write(head0 + `"records":[`)
	return rw
}

func (rw *ResultWriter) write(s string) {
	if rw.err == nil {
		_, rw.err = rw.w.WriteString(s)
	}
}

// item writes the JSON appended to rw.buf as the open list's next item.
func (rw *ResultWriter) item(b []byte, err error) error {
	rw.buf = b
	if err != nil && rw.err == nil {
		rw.err = err
	}
	if rw.n > 0 {
		rw.write(",")
	}
	rw.n++
	if rw.err == nil {
		_, rw.err = rw.w.Write(b)
	}
	return rw.err
}

// Record appends a flow record (before any Server).
func (rw *ResultWriter) Record(rec perftest.FlowRecord) error { return record(rw, &rec, rec.Output) }

// RecordOutput is Record with the record's output given as bytes
// (rec.Output is ignored), for a writer that renders outputs into a
// buffer it reuses.
func (rw *ResultWriter) RecordOutput(rec perftest.FlowRecord, output []byte) error {
	return record(rw, &rec, output)
}

func record[T string | []byte](rw *ResultWriter, rec *perftest.FlowRecord, output T) error {
	if rw.state != 0 {
		return errors.New("agent result: a record after the server runs")
	}
	rw.late.add(*rec)
	return rw.item(appendRecord(rw.buf[:0], rec, output))
}

// Server appends a server run.
func (rw *ResultWriter) Server(sr ServerRun) error { return server(rw, &sr, sr.Output) }

// ServerOutput is Server with the run's output given as bytes (sr.Output
// is ignored).
func (rw *ResultWriter) ServerOutput(sr ServerRun, output []byte) error {
	return server(rw, &sr, output)
}

func server[T string | []byte](rw *ResultWriter, sr *ServerRun, output T) error {
	rw.servers()
	return rw.item(appendServer(rw.buf[:0], sr, output), nil)
}

// servers ends the records, once.
func (rw *ResultWriter) servers() {
	if rw.state == 0 {
		rw.write(`],"servers":[`)
		rw.state, rw.n = 1, 0
	}
}

// Close ends the result with the late records' tallies and flushes it.
func (rw *ResultWriter) Close() error {
	if rw.state == 0 {
		rw.write(`],"servers":[`)
	}
	rw.state = 2
	rw.write(fmt.Sprintf(`],"late":%d,"max_lag_ns":%d}`, rw.late.late, rw.late.maxLag))
	if rw.err == nil {
		rw.err = rw.w.Flush()
	}
	return rw.err
}

// ReadResult streams an agent's result JSON: rec is called for every flow
// record in order, with the fields read so far (those that precede the
// records: host, epoch, tolerance), so a caller can act on each record and
// drop it, its verbatim output included. It returns the Result without
// records and server runs.
func ReadResult(r io.Reader, rec func(head *Result, r perftest.FlowRecord) error) (*Result, error) {
	return readResult(r, true, rec)
}

// ReadRecords is ReadResult without the records' verbatim output (Output
// is left empty), for a reader that keeps the result file itself as the
// evidence (the runner archives it): the output, ~1.4 KB a flow, is
// scanned past, never unescaped into a string.
func ReadRecords(r io.Reader, rec func(head *Result, r perftest.FlowRecord) error) (*Result, error) {
	return readResult(r, false, rec)
}
