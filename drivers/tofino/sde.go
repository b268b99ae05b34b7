package tofino

import (
	"context"
	"fmt"
	"path"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
)

// SDEQoS sets switch QoS through the SDE shell over SSH: it uploads a
// generated bfrt_python script over SFTP and runs it with
// `<SDE>/run_bfshell.sh -b <script>` (hardware-surfaces reference, 3.2).
// The SDE shell has no candidate or confirmed commit, so a change is:
// snapshot (read back), write the difference, read back and compare; if
// the write or the comparison fails, the snapshot is written back and read
// back again, and both outcomes are reported.
//
// The SSH user's environment must let run_bfshell.sh find the SDE (SDE and
// SDE_INSTALL exported, as the SDE's own set_sde.bash does), and a
// bf_switchd must run: the SDE shell is its client.
//
// The tables live in bf_switchd: a cold start (every image activation or
// rollback) brings them back to their defaults, so QoS set here must be
// set again after one.
type SDEQoS struct {
	SSH *sshdrv.Pool
	// SDE is $SDE on the switches: run_bfshell.sh lives there.
	SDE string
	// Root is labctl's directory on the switches (Driver.Root): the image
	// state file there says which program runs.
	Root string
	// ScriptDir is where scripts are uploaded (overwritten each time, so
	// the last script stays there for a person to look at). They run as
	// root through run_bfshell.sh, so it is under Root, not a directory
	// anyone may write.
	ScriptDir string
	// Program is the P4 program whose ECN and DSCP tables (see TM) the
	// driver uses on a switch with no image labctl activated; otherwise
	// the active image's program is (ActiveProgram).
	Program string
}

// DefaultProgram is the name of the lab's P4 program whose tables carry
// ECN marking and DSCP classification on switches that run no image
// labctl activated, unless a driver is told otherwise.
const DefaultProgram = "labctl"

// NewSDEQoS is an SDE-shell QoS driver with the defaults: SDE in
// /opt/bf-sde, labctl's files in /opt/labctl (scripts in
// /opt/labctl/qos), program DefaultProgram when no image is active.
func NewSDEQoS(pool *sshdrv.Pool) *SDEQoS {
	return &SDEQoS{SSH: pool, SDE: "/opt/bf-sde", Root: defaultRoot, ScriptDir: path.Join(defaultRoot, "qos"), Program: DefaultProgram}
}

// ActiveProgram is the P4 program running on switch t, whose tables the
// driver writes: the program of the image labctl activated there (its
// state file and manifest), else d.Program.
func (d *SDEQoS) ActiveProgram(ctx context.Context, t sshdrv.Target) (string, error) {
	st, err := readState(ctx, d.SSH, t, d.Root)
	if err != nil || st.Active == "" {
		return d.Program, err
	}
	m, err := readManifest(ctx, d.SSH, t, d.Root, st.Active)
	if err != nil {
		return "", fmt.Errorf("the active image's program: %w", err)
	}
	return m.Program, nil
}

// ShellError is a bfrt_python script the SDE shell did not run through.
type ShellError struct {
	Device, Script, Answer string
}

func (e *ShellError) Error() string {
	return fmt.Sprintf("device %s: run_bfshell.sh -b %s: %s", e.Device, e.Script, e.Answer)
}

// run uploads script as name and runs it. A script fails if the shell
// exits non-zero or prints a Python traceback: whether run_bfshell.sh's
// exit status reflects an exception in a -b script is UNCERTAIN, so the
// output is checked too (and every write is read back anyway). Error lines
// alone do not count: bfrt_python may print one for a get of an absent
// entry that the read-back script catches.
func (d *SDEQoS) run(ctx context.Context, t sshdrv.Target, name, script string) (string, error) {
	p := path.Join(d.ScriptDir, name)
	if err := d.SSH.WriteFile(ctx, t, p, []byte(script), 0o644); err != nil {
		return "", err
	}
	res, err := d.SSH.Exec(ctx, t, sshdrv.Quote(path.Join(d.SDE, "run_bfshell.sh"))+" -b "+sshdrv.Quote(p))
	if err != nil {
		return "", err
	}
	out := string(res.Stdout)
	if res.ExitStatus != 0 || hasPythonError(out) {
		return out, &ShellError{Device: t.Name, Script: p, Answer: shellAnswer(res)}
	}
	return out, nil
}

func hasPythonError(out string) bool {
	return strings.Contains(out, "Traceback (most recent call last)")
}

// shellAnswer is what the shell said about a failure: its error lines (the
// exception that ended a traceback among them), or its exit status.
func shellAnswer(r *sshdrv.Result) string {
	var keep []string
	for _, l := range strings.Split(string(r.Stdout)+string(r.Stderr), "\n") {
		if strings.Contains(l, "Error:") && !strings.HasPrefix(l, readbackTag) {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	if len(keep) == 0 {
		if err := r.Err(); err != nil {
			return err.Error()
		}
		return "the script stopped with an error"
	}
	return strings.Join(keep, "; ")
}

func (d *SDEQoS) read(ctx context.Context, t sshdrv.Target, ports []string, prog string) (*TM, error) {
	script, err := ReadbackScript(ports, prog)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", t.Name, err)
	}
	out, err := d.run(ctx, t, "readback.py", script)
	if err != nil {
		return nil, err
	}
	tm, err := ParseReadback(out)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", t.Name, err)
	}
	for i := range tm.Ports {
		if tm.Ports[i].PPGID == 0 {
			return nil, fmt.Errorf("device %s: read-back: port %s has no PPG line", t.Name, tm.Ports[i].Name)
		}
	}
	return tm, nil
}

// write runs the script that takes the switch from one state to another.
func (d *SDEQoS) write(ctx context.Context, t sshdrv.Target, name string, from, to *TM, prog string) error {
	script := WriteScript(from, to, prog)
	if script == "" {
		return nil
	}
	_, err := d.run(ctx, t, name, script)
	return err
}

// SDESession changes one switch: Stage makes the change (or leaves the
// switch as it was and says so), Cancel undoes a staged change.
type SDESession struct {
	d        *SDEQoS
	t        sshdrv.Target
	ports    []string
	prog     string // the active program, read once per session
	snapshot *TM
}

// Session starts work on switch t with the given ports.
func (d *SDEQoS) Session(t sshdrv.Target, ports []string) *SDESession {
	return &SDESession{d: d, t: t, ports: ports}
}

// Ports are the ports the session reads and writes.
func (s *SDESession) Ports() []string { return append([]string(nil), s.ports...) }

// read reads the switch's TM state with the session's program.
func (s *SDESession) read(ctx context.Context) (*TM, error) {
	if s.prog == "" {
		prog, err := s.d.ActiveProgram(ctx, s.t)
		if err != nil {
			return nil, err
		}
		s.prog = prog
	}
	return s.d.read(ctx, s.t, s.ports, s.prog)
}

// Read is the switch's current state per port, and the cell size.
func (s *SDESession) Read(ctx context.Context) (map[string]switchqos.Config, int64, error) {
	tm, err := s.read(ctx)
	if err != nil {
		return nil, 0, err
	}
	return tm.Configs(), tm.CellBytes, nil
}

// RollbackError is a failed change whose undoing failed too: the switch is
// in neither state, and both errors are kept.
type RollbackError struct {
	Device        string
	Err, Rollback error
}

func (e *RollbackError) Error() string {
	return fmt.Sprintf("%v; rollback to the previous state failed too: %v", e.Err, e.Rollback)
}

func (e *RollbackError) Unwrap() error { return e.Err }

// Stage snapshots the switch, writes want and reads back. If the write or
// the read-back fails, the snapshot is written back and verified: the
// error says what failed, and is a *RollbackError if the switch could not
// be brought back (rolledBack reports whether it was).
func (s *SDESession) Stage(ctx context.Context, want switchqos.Config) (rolledBack bool, err error) {
	snap, err := s.read(ctx)
	if err != nil {
		return false, err
	}
	s.snapshot = snap
	target := snap.With(want)
	err = s.d.write(ctx, s.t, "apply.py", snap, target, s.prog)
	if err == nil {
		err = s.verify(ctx, target)
	}
	if err == nil {
		return false, nil
	}
	if rerr := s.restore(ctx); rerr != nil {
		return false, &RollbackError{Device: s.t.Name, Err: err, Rollback: rerr}
	}
	return true, fmt.Errorf("%w (rolled back: the previous state is read back)", err)
}

// verify reads back and compares with the intended state, table by
// table: nothing may be left that a write would still have to change.
func (s *SDESession) verify(ctx context.Context, want *TM) error {
	got, err := s.read(ctx)
	if err != nil {
		return fmt.Errorf("read-back: %w", err)
	}
	if rest := WriteScript(got, want, s.prog); rest != "" {
		lines := strings.Split(strings.TrimSpace(rest), "\n")[1:]
		return fmt.Errorf("device %s: read-back differs from what was written in %d table entries, first: %s", s.t.Name, len(lines), lines[0])
	}
	return nil
}

// restore writes the snapshot back over whatever is there now.
func (s *SDESession) restore(ctx context.Context) error {
	now, err := s.read(ctx)
	if err != nil {
		return err
	}
	if err := s.d.write(ctx, s.t, "rollback.py", now, s.snapshot, s.prog); err != nil {
		return err
	}
	return s.verify(ctx, s.snapshot)
}

// Cancel undoes a staged change (for --atomic, when another switch failed).
func (s *SDESession) Cancel(ctx context.Context) error {
	if s.snapshot == nil {
		return fmt.Errorf("device %s: cancel: nothing staged", s.t.Name)
	}
	return s.restore(ctx)
}
