package testwatch

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// module prefixes the functions of labctl's own packages in a stack.
const module = "github.com/labctl/labctl/"

// Watch is a watchdog for a kind of step.
type Watch struct {
	After time.Duration // how long a step may run
	// Focus names the step's goroutines: those with a frame whose
	// function contains one of these (e.g. "provision_test.dropOnce").
	Focus   []string
	Out     io.Writer      // where the report goes
	Exit    func(code int) // called after the report
	DumpDir string         // where the whole dump is written; "" for os.TempDir()
	// fired lets one step of those watched with this Watch (and its
	// copies) report: several stuck at once would interleave their reports.
	fired *sync.Once
}

// Stuck is the watchdog tests use: it reports on stderr and ends the test
// binary, as go test's -timeout would, only sooner. A test goroutine
// stuck in a call cannot be failed from another goroutine, and letting it
// run on only delays the same end.
func Stuck(after time.Duration, focus ...string) Watch {
	return Watch{After: after, Focus: focus, Out: os.Stderr, Exit: os.Exit, fired: new(sync.Once)}
}

// Start arms the watchdog for one step, which what describes (e.g. "drop
// at 12ms"); stop disarms it.
func (w Watch) Start(what string) (stop func()) {
	report := func() {
		dump := allStacks()
		dir := w.DumpDir
		if dir == "" {
			dir = os.TempDir()
		}
		path := filepath.Join(dir, fmt.Sprintf("testwatch-%d.txt", os.Getpid()))
		if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
			path = "not written: " + err.Error()
		}
		fmt.Fprint(w.Out, Report(what, w.After, dump, w.Focus, path))
		w.Exit(2)
	}
	t := time.AfterFunc(w.After, func() {
		if w.fired == nil {
			report()
			return
		}
		w.fired.Do(report)
	})
	return func() { t.Stop() }
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutine is one goroutine of a dump: its header ("goroutine 7 [select,
// 2 minutes]:") and the functions of its frames, innermost first.
type goroutine struct {
	header string
	funcs  []string
}

// parse splits a runtime.Stack(all) dump into goroutines, keeping each
// frame's function (without its arguments) and dropping the file lines.
func parse(dump string) []goroutine {
	var out []goroutine
	for _, block := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		lines := strings.Split(block, "\n")
		if !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		g := goroutine{header: lines[0]}
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") || l == "" {
				continue // file:line of the frame above
			}
			if i := strings.LastIndex(l, "("); i > 0 && strings.HasSuffix(l, ")") && !strings.HasPrefix(l, "created by ") {
				l = l[:i]
			}
			g.funcs = append(g.funcs, l)
		}
		out = append(out, g)
	}
	return out
}

// state is the header's wait state without its goroutine number.
func (g goroutine) state() string {
	if i, j := strings.Index(g.header, "["), strings.LastIndex(g.header, "]"); i >= 0 && j > i {
		return g.header[i : j+1]
	}
	return g.header
}

func (g goroutine) has(subs []string) bool {
	return slices.ContainsFunc(g.funcs, func(f string) bool {
		return slices.ContainsFunc(subs, func(s string) bool { return strings.Contains(f, s) })
	})
}

// innermost is the goroutine's innermost labctl function, or its
// innermost function if it runs none.
func (g goroutine) innermost() string {
	for _, f := range g.funcs {
		if strings.HasPrefix(f, module) || strings.HasPrefix(f, "created by "+module) {
			return strings.TrimPrefix(strings.TrimPrefix(f, "created by "), module)
		}
	}
	if len(g.funcs) > 0 {
		return g.funcs[0]
	}
	return "?"
}

// maxFrames bounds the frames printed per focused goroutine: the blocked
// call is at the top, the step's entry a few frames below.
const maxFrames = 14

// Report says which step is stuck, sums up the labctl goroutines outside
// it a line per (state, innermost labctl function), and prints the step's
// own goroutines last, where a log's tail keeps them. dumpPath names the file that holds the whole dump.
func Report(what string, after time.Duration, dump string, focus []string, dumpPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntestwatch: %s is still running after %v: ending the test binary (every goroutine's stack: %s)\n", what, after, dumpPath)
	counts := map[string]int{}
	var focused []goroutine
	for _, g := range parse(dump) {
		switch {
		case g.has(focus):
			focused = append(focused, g)
		case g.has([]string{module}) && !g.has([]string{"testwatch."}):
			counts[g.state()+" "+g.innermost()]++
		}
	}
	fmt.Fprintf(&b, "testwatch: other labctl goroutines, by state and innermost labctl function:\n")
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "  %3d %s\n", counts[k], k)
	}
	fmt.Fprintf(&b, "testwatch: the step's goroutines (%d):\n", len(focused))
	for _, g := range focused {
		fmt.Fprintf(&b, "%s\n", g.header)
		for i, f := range g.funcs {
			if i == maxFrames {
				fmt.Fprintf(&b, "  ... %d more\n", len(g.funcs)-maxFrames)
				break
			}
			fmt.Fprintf(&b, "  %s\n", strings.Replace(f, module, "", 1))
		}
	}
	return b.String()
}
