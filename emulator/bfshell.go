package emulator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// Bfshell is an emulated switch's SDE shell: `run_bfshell.sh -b script.py`
// runs a bfrt_python script (the subset of bfpython.go) against the
// switch's tables (bftables.go), which persist for the life of the lab.
// Writes take effect in the fabric twin as committed NETCONF QoS does.
type Bfshell struct {
	lab    *Lab
	device string
	root   string // the switch's filesystem
	ports  []string

	mu        sync.Mutex
	sw        *bfSwitch
	failWrite bool
}

// addBfshell gives a switch's shell the run_bfshell.sh command; portsUp
// is what the ports' $PORT_UP reads.
func (l *Lab) addBfshell(sw inventory.Switch, root string, sh *shell, portsUp func() bool) error {
	var ports []string
	for _, p := range sw.Ports {
		ports = append(ports, p.Name)
	}
	tables, err := newBfSwitch(ports, tofino.DefaultProgram, switchBufferBytes(), portsUp)
	if err != nil {
		return fmt.Errorf("device %s: %w", sw.Name, err)
	}
	b := &Bfshell{lab: l, device: sw.Name, root: root, ports: ports, sw: tables}
	if l.bfshells == nil {
		l.bfshells = map[string]*Bfshell{}
	}
	l.bfshells[sw.Name] = b
	sh.cmds["run_bfshell.sh"] = b.run
	return nil
}

// failNextWrite makes the next script that writes tables fail at its last
// write, after the writes before it took effect: a half-applied change,
// as a switch that runs out of a resource midway leaves (FaultCommit).
func (b *Bfshell) failNextWrite() { b.mu.Lock(); b.failWrite = true; b.mu.Unlock() }

var writeCall = regexp.MustCompile(`\.(mod|add|delete|add_with_\w+|mod_with_\w+)\(`)

// run is run_bfshell.sh. Only -b is emulated: -f (a bfshell/ucli command
// file) is refused. What the real shell prints around a -b script, and
// whether its exit status reflects an exception, is UNCERTAIN; the
// emulator prints only what the script prints, then a Python traceback
// and exit status 1 if the script raised.
func (b *Bfshell) run(_ context.Context, argv []string, s *sshd.Session) int {
	if len(argv) < 3 || argv[1] != "-b" {
		fmt.Fprintln(s.Stderr, "run_bfshell.sh: only -b <script.py> is emulated")
		return 2
	}
	file := argv[2]
	root, err := os.OpenRoot(b.root)
	if err != nil {
		fmt.Fprintf(s.Stderr, "run_bfshell.sh: %v\n", err)
		return 1
	}
	src, err := root.ReadFile(strings.TrimPrefix(filepath.Clean("/"+file), "/"))
	root.Close()
	if err != nil {
		fmt.Fprintf(s.Stdout, "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: '%s'\n", file)
		return 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	in := &pyInterp{sw: b.sw, vars: map[string]any{}, print: func(line string) { fmt.Fprintln(s.Stdout, line) }}
	stmts, err := parseScript(string(src))
	if err == nil && b.failWrite {
		if last := lastWrite(stmts); last > 0 {
			in.failAt, b.failWrite = last, false
		}
	}
	line := 0
	if err == nil {
		line, err = in.run(stmts)
	}
	if b.sw.writes > 0 {
		b.applyToTwin()
	}
	if err != nil {
		lines := strings.Split(string(src), "\n")
		fmt.Fprintln(s.Stdout, "Traceback (most recent call last):")
		if line > 0 && line <= len(lines) {
			fmt.Fprintf(s.Stdout, "  File \"%s\", line %d, in <module>\n    %s\n", file, line, strings.TrimSpace(lines[line-1]))
		}
		fmt.Fprintln(s.Stdout, err)
		return 1
	}
	return 0
}

func lastWrite(stmts []bfStmt) int {
	last := 0
	for _, st := range stmts {
		if st.body == nil && writeCall.MatchString(st.src) {
			last = st.line
		}
	}
	return last
}

// applyToTwin reads the tables back the way the driver does and hands the
// first port's configuration to the twin, as a NETCONF commit does.
func (b *Bfshell) applyToTwin() {
	b.sw.writes = 0
	script, err := tofino.ReadbackScript(b.ports, tofino.DefaultProgram)
	if err != nil || len(b.ports) == 0 {
		return
	}
	var out strings.Builder
	in := &pyInterp{sw: b.sw, vars: map[string]any{}, print: func(l string) { out.WriteString(l + "\n") }}
	stmts, err := parseScript(script)
	if err == nil {
		_, err = in.run(stmts)
	}
	var tm *tofino.TM
	if err == nil {
		tm, err = tofino.ParseReadback(out.String())
	}
	if err != nil {
		b.lab.log.Warn("twin: cannot read the SDE shell's QoS", "device", b.device, "err", err)
		return
	}
	if err := b.lab.twin.configure(b.device, tm.Configs()[b.ports[0]]); err != nil {
		b.lab.log.Warn("twin: cannot apply the SDE shell's QoS", "device", b.device, "err", err)
	}
}
