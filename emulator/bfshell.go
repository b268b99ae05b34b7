package emulator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// Bfshell is an emulated switch's SDE shell: `run_bfshell.sh -b script.py`
// runs a bfrt_python script (the subset of bfpython.go) against the tables
// (bftables.go) of the bf_switchd that runs on the switch. As on a real
// switch, the shell needs a running bf_switchd, and the tables live as
// long as that bf_switchd: every cold start brings the traffic manager's
// tables back to their defaults (the twin's default QoS, defaultQoS) and
// serves the ECN and DSCP tables under the name of the program it loaded,
// empty but for the default marking. On a switch the lab sets through the
// SDE shell (qos_driver: sde), writes and cold starts take effect in the
// fabric twin as committed NETCONF QoS does on the others.
type Bfshell struct {
	lab    *Lab
	device string
	root   string // the switch's filesystem
	ports  []string
	// portsUp is what the ports' $PORT_UP reads.
	portsUp func() bool

	mu       sync.Mutex
	sw       *bfSwitch // the running bf_switchd's tables
	switchds int       // bf_switchd processes running
}

// addBfshell gives a switch's shell the run_bfshell.sh command.
func (l *Lab) addBfshell(sw inventory.Switch, root string, sh *shell, portsUp func() bool) *Bfshell {
	ports := sw.PortNames()
	b := &Bfshell{lab: l, device: sw.Name, root: root, ports: ports, portsUp: portsUp}
	if l.bfshells == nil {
		l.bfshells = map[string]*Bfshell{}
	}
	l.bfshells[sw.Name] = b
	sh.cmds["run_bfshell.sh"] = b.run
	return b
}

// coldStart is a bf_switchd's start: fresh tables for program ("" when no
// program was loaded: no program tables), the traffic manager and the
// program's marking at the twin's default QoS. The defaults are written
// with the SDE-shell driver's own scripts, so they are laid out in the
// tables exactly as labctl would write them; switches with the same ports
// and program share that work (Lab.baseline).
func (b *Bfshell) coldStart(program string) error {
	sw, err := newBfSwitch(b.ports, program, switchBufferBytes(), b.portsUp)
	if err != nil {
		return fmt.Errorf("device %s: %w", b.device, err)
	}
	var q switchqos.Config
	if len(b.ports) > 0 && program != "" {
		base, err := b.lab.baseline(b.ports, program, func() (sdeBaseline, error) { return defaultTables(sw, b.ports, program) })
		if err != nil {
			return fmt.Errorf("device %s: default QoS: %w", b.device, err)
		}
		sw.setRows(base.rows)
		sw.writes, q = 0, base.qos
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sw, b.switchds = sw, b.switchds+1
	if program != "" && b.lab.twinFollows(b.device, qosdriver.SDE) {
		if err := b.lab.twin.configure(b.device, q); err != nil {
			b.lab.log.Warn("twin: cannot apply the SDE shell's QoS", "device", b.device, "err", err)
		}
	}
	return nil
}

// sdeBaseline is a switch's tables at the defaults, and the QoS they hold.
type sdeBaseline struct {
	rows bfRows
	qos  switchqos.Config // the first port's, as the twin takes it
}

// defaultTables writes the twin's default QoS into sw's fresh tables.
func defaultTables(sw *bfSwitch, ports []string, program string) (sdeBaseline, error) {
	tm, err := readTM(sw, ports, program)
	if err != nil {
		return sdeBaseline{}, err
	}
	if _, err := runScript(sw, tofino.WriteScript(tm, tm.With(defaultQoS(tm.CellBytes)), program), nil); err != nil {
		return sdeBaseline{}, err
	}
	if tm, err = readTM(sw, ports, program); err != nil {
		return sdeBaseline{}, err
	}
	return sdeBaseline{rows: sw.rows(), qos: tm.Configs()[ports[0]]}, nil
}

// baseline is the default tables of a switch with these ports running
// program, built once per lab.
func (l *Lab) baseline(ports []string, program string, build func() (sdeBaseline, error)) (sdeBaseline, error) {
	key := program + " " + strings.Join(ports, ",")
	l.baselines.mu.Lock()
	defer l.baselines.mu.Unlock()
	if b, ok := l.baselines.m[key]; ok {
		return b, nil
	}
	b, err := build()
	if err != nil {
		return b, err
	}
	if l.baselines.m == nil {
		l.baselines.m = map[string]sdeBaseline{}
	}
	l.baselines.m[key] = b
	return b, nil
}

// switchdExited is a bf_switchd's end: with none left the shell cannot
// connect, and its tables are gone.
func (b *Bfshell) switchdExited() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.switchds--; b.switchds <= 0 {
		b.switchds, b.sw = 0, nil
	}
}

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
	if b.sw == nil {
		// bfshell is a client of bf_switchd's CLI server (port 9999): with
		// no bf_switchd it cannot connect. The real wording is UNCERTAIN.
		fmt.Fprintln(s.Stderr, "bfshell: cannot connect to the bf_switchd CLI server at localhost:9999: Connection refused (is bf_switchd running?)")
		return 1
	}
	stmts, err := parseScript(string(src))
	failAt := 0
	if err == nil {
		// An armed FaultCommit fails the next script that writes tables at
		// its last write, after the writes before it took effect: a
		// half-applied change, as a switch that runs out of a resource
		// midway leaves.
		if last := lastWrite(stmts); last > 0 && b.lab.faults.take(b.device, FaultCommit) {
			failAt = last
		}
	}
	line := 0
	if err == nil {
		in := &pyInterp{sw: b.sw, vars: map[string]any{}, failAt: failAt, print: func(line string) { fmt.Fprintln(s.Stdout, line) }}
		line, err = in.run(stmts)
	}
	if b.sw.writes > 0 && b.lab.twinFollows(b.device, qosdriver.SDE) {
		b.applyToTwin(b.sw.program)
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

// runScript runs a bfrt_python script on sw and returns what it printed.
func runScript(sw *bfSwitch, script string, print func(string)) (int, error) {
	stmts, err := parseScript(script)
	if err != nil {
		return 0, err
	}
	if print == nil {
		print = func(string) {}
	}
	in := &pyInterp{sw: sw, vars: map[string]any{}, print: print}
	return in.run(stmts)
}

// readTM reads sw's tables back the way the SDE-shell driver does.
func readTM(sw *bfSwitch, ports []string, program string) (*tofino.TM, error) {
	script, err := tofino.ReadbackScript(ports, program)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	if _, err := runScript(sw, script, func(l string) { out.WriteString(l + "\n") }); err != nil {
		return nil, err
	}
	return tofino.ParseReadback(out.String())
}

// applyToTwin hands the first port's configuration, as the driver reads
// it back, to the twin, as a NETCONF commit does. b.mu is held.
func (b *Bfshell) applyToTwin(program string) {
	b.sw.writes = 0
	if len(b.ports) == 0 || program == "" {
		return
	}
	tm, err := readTM(b.sw, b.ports, program)
	if err != nil {
		b.lab.log.Warn("twin: cannot read the SDE shell's QoS", "device", b.device, "err", err)
		return
	}
	if err := b.lab.twin.configure(b.device, tm.Configs()[b.ports[0]]); err != nil {
		b.lab.log.Warn("twin: cannot apply the SDE shell's QoS", "device", b.device, "err", err)
	}
}
