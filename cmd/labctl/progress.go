package main

import (
	"fmt"
	"io"
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
