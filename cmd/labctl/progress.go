package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/labctl/labctl/scenarios"
)

// termProgress draws the runner's stages and a flows bar on a terminal.
type termProgress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	bar   bool // a bar line is open and must be finished
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func newTermProgress(w io.Writer) *termProgress { return &termProgress{w: w, start: time.Now()} }

func (p *termProgress) Stage(stage, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endBar()
	fmt.Fprintf(p.w, "%6.1fs  %-8s %s\n", time.Since(p.start).Seconds(), stage, detail)
}

func (p *termProgress) Flows(point string, done, total int) { p.draw("flows", point, done, total) }

// Point shows which point of how many starts, with the run's ETA, and
// says so when one fails.
func (p *termProgress) Point(pp scenarios.PointProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp.Finished {
		if pp.Error != "" {
			p.endBar()
			fmt.Fprintf(p.w, "%6.1fs  %-8s %d/%d %s FAILED: %s\n", time.Since(p.start).Seconds(), "point", pp.Index, pp.Total, pp.Point, firstLine(pp.Error))
		}
		return
	}
	p.endBar()
	eta := "ETA after the first point"
	if pp.Done > 0 {
		eta = "ETA " + pp.ETA.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "%6.1fs  %-8s %d/%d %s  (%d done, %d failed, %s)\n", time.Since(p.start).Seconds(), "point",
		pp.Index, pp.Total, pp.Point, pp.Done, pp.Failed, eta)
}

// Devices shows devices done of total (provisioning).
func (p *termProgress) Devices(device string, done, total int) {
	p.draw("devices", device, done, total)
}

func (p *termProgress) draw(label, item string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	const width = 30
	n := 0
	if total > 0 {
		n = done * width / total
	}
	fmt.Fprintf(p.w, "\r         %-8s [%s%s] %d/%d  %-12s", label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, item)
	p.bar = true
	if done == total {
		p.endBar()
	}
}

func (p *termProgress) endBar() {
	if p.bar {
		fmt.Fprintln(p.w)
		p.bar = false
	}
}

// jsonProgress writes the runner's progress as JSON lines, for a run with
// no terminal (a nightly job's log): one line per stage, one when each
// point starts (i/n and the run's ETA) and ends, and the flows of a point
// at most every flowsEvery.
type jsonProgress struct {
	mu        sync.Mutex
	enc       *json.Encoder
	start     time.Time
	lastFlows time.Time
}

const flowsEvery = time.Second

// progressLine is one line of jsonProgress. Event is "stage", "point",
// "point_done", "point_failed", "flows" or "warning".
type progressLine struct {
	Time    time.Time `json:"time"`
	Elapsed float64   `json:"elapsed_s"`
	Event   string    `json:"event"`
	Stage   string    `json:"stage,omitempty"`
	Detail  string    `json:"detail,omitempty"`
	Point   string    `json:"point,omitempty"`
	Index   int       `json:"index,omitempty"` // the point's number, 1-based
	Total   int       `json:"total,omitempty"` // points in the run
	Done    *int      `json:"done,omitempty"`  // points finished, or flows of the point
	Failed  *int      `json:"failed,omitempty"`
	FlowsOf int       `json:"flows_total,omitempty"`
	ETA     *float64  `json:"eta_s,omitempty"` // seconds to the end of the run; absent before a point has finished
	Error   string    `json:"error,omitempty"`
}

func newJSONProgress(w io.Writer) *jsonProgress {
	return &jsonProgress{enc: json.NewEncoder(w), start: time.Now()}
}

func (p *jsonProgress) emit(l progressLine) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l.Time = time.Now().UTC()
	l.Elapsed = math.Round(time.Since(p.start).Seconds()*10) / 10
	_ = p.enc.Encode(l) // progress is best effort; the run's result is on stdout
}

func (p *jsonProgress) Stage(stage, detail string) {
	p.emit(progressLine{Event: "stage", Stage: stage, Detail: detail})
}

func (p *jsonProgress) Point(pp scenarios.PointProgress) {
	l := progressLine{Event: "point", Point: pp.Point, Index: pp.Index, Total: pp.Total, Done: &pp.Done, Failed: &pp.Failed}
	switch {
	case pp.Finished && pp.Error != "":
		l.Event, l.Error = "point_failed", firstLine(pp.Error)
	case pp.Finished:
		l.Event = "point_done"
	}
	if pp.Done > 0 {
		eta := math.Round(pp.ETA.Seconds())
		l.ETA = &eta
	}
	p.emit(l)
}

// Warning is a problem that did not stop the run (also in stdout's line).
func (p *jsonProgress) Warning(msg string) { p.emit(progressLine{Event: "warning", Detail: msg}) }

func (p *jsonProgress) Flows(point string, done, total int) {
	p.mu.Lock()
	now := time.Now()
	skip := done > 0 && done < total && now.Sub(p.lastFlows) < flowsEvery
	if !skip {
		p.lastFlows = now
	}
	p.mu.Unlock()
	if !skip {
		p.emit(progressLine{Event: "flows", Point: point, Done: &done, FlowsOf: total})
	}
}
