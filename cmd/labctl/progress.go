package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// termProgress draws the runner's stages and a flows bar on a terminal.
type termProgress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	bar   bool // a bar line is open and must be finished
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
