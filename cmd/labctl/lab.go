package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/lease"
	"github.com/labctl/labctl/scenarios"
)

// home is labctl's state directory: $LABCTL_HOME or ~/.labctl.
func home() string {
	if h := os.Getenv("LABCTL_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".labctl")
	}
	return ".labctl"
}

// openLab resolves a lab for a command: a lab already up, a hardware lab
// file, or an emulated lab that is started now and stopped by the closer.
func openLab(ctx context.Context, name string, em scenarios.Emulation, log *slog.Logger) (*inventory.Lab, func(), error) {
	st, up, err := runningLab(name)
	if err != nil {
		return nil, nil, err
	}
	if up {
		lab, err := inventory.Load(st.LabFile)
		if err != nil {
			return nil, nil, err
		}
		return lab, func() {}, nil
	}
	lab, err := inventory.ResolveWith(name, qosdriver.Builtin())
	if err != nil {
		return nil, nil, err
	}
	if !lab.Emulated {
		return lab, func() {}, nil
	}
	if err := ensureOpenFiles(lab); err != nil {
		return nil, nil, err
	}
	dir, err := newTempLabDir()
	if err != nil {
		return nil, nil, err
	}
	opt := twinOptions(em)
	opt.Dir, opt.Logger = dir, log
	tuneGCForEmulatedLab(os.Getenv, len(lab.Hosts)) // this process now holds the lab's twin and servers (gc.go)
	l, err := emulator.Start(ctx, lab, opt)
	if err != nil {
		_ = removeTempLabDir(dir)
		return nil, nil, err
	}
	if em.HostLB != "" { // the RNIC profile's host module; without one, the lab file's (if any) stays
		if err := l.SetHostLB(em.HostLB, em.HostLBParams); err != nil {
			l.Close()
			_ = removeTempLabDir(dir)
			return nil, nil, err
		}
	}
	return l.Inventory(), func() {
		l.Close()
		if err := removeTempLabDir(dir); err != nil {
			log.Warn("the next labctl command removes it", "err", err)
		}
	}, nil
}

// labOpener opens the labs of a run's matrix variants with openLab: a
// running or hardware lab as it is, an emulated one started with the
// variant's emulation section (and stopped by release). A shared lab (up
// or hardware) is leased first, waiting up to wait, and released with it.
type labOpener struct {
	log   *slog.Logger
	wait  time.Duration
	stage func(stage, detail string) // the run's progress, if any
}

func (o labOpener) Open(ctx context.Context, name string, em scenarios.Emulation) (*inventory.Lab, func(), error) {
	if o.stage != nil {
		o.stage(scenarios.StageReserve, name)
	}
	// a lab the run command leased already passes (same process)
	unlease, err := takeLab(ctx, name, "run", o.wait)
	if err != nil {
		return nil, nil, err
	}
	lab, closeLab, err := openLab(ctx, name, em, o.log)
	if err != nil {
		_ = unlease() // nothing was done on the lab
		return nil, nil, err
	}
	return lab, func() {
		closeLab()
		if err := unlease(); err != nil { // a swept lab's lease: the opener returns no error, so say it
			fmt.Fprintln(os.Stderr, "labctl: warning:", err)
		}
	}, nil
}

// Inventory is what lab name holds, read without starting it (the
// runner checks a scenario against it before creating anything).
func (o labOpener) Inventory(name string) (*inventory.Lab, error) {
	if st, up, err := runningLab(name); err == nil && up {
		return inventory.Load(st.LabFile)
	}
	return inventory.ResolveWith(name, qosdriver.Builtin())
}

func labCommand() *cli.Command {
	return &cli.Command{
		Name:  "lab",
		Usage: "start, stop and inspect long-lived emulated labs",
		Description: `'lab up LAB' starts an emulated lab in the background and keeps it running, so
several commands can use it: pass its name to 'labctl run --lab'. Its state
(keys, known_hosts, the exported lab file with the real loopback endpoints)
lives under $LABCTL_HOME/labs/<name> (default ~/.labctl).

Commands that change a lab (run, provision apply, image push/activate/
rollback, lab down) hold its lease while they run: a second one fails naming
the holder, or waits with --wait 10m. 'lab reserve LAB --for 4h' holds a lab
(also a hardware lab file) for you; 'lab status' shows who holds each lab;
docs/reservation.md says where the lease lives.`,
		Subcommands: []*cli.Command{
			{
				Name: "up", Usage: "start an emulated lab in the background", ArgsUsage: "LAB",
				Description: `Starts LAB (a lab file or a generated fabric) in the background and returns
once it serves. --format json prints {lab, lab_file, pid, endpoints} (endpoints:
how many SSH and gNMI endpoints the lab serves) for scripts; --foreground
prints no result (it serves until interrupted).

Examples:
   labctl lab up leafspine:2x4:8@100
   labctl lab up leafspine:2x4:8@100 --format json | jq -r .lab_file`,
				Flags: append([]cli.Flag{&cli.BoolFlag{Name: "foreground", Usage: "run in this process until interrupted"}, engineFlag, newFormatFlag(formatTable)}, labGNMIFlags...),
				Action: func(c *cli.Context) error {
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					if c.NArg() != 1 {
						return exitError{2, fmt.Errorf("lab up needs one LAB (a lab file or e.g. leafspine:2x4:8@100)")}
					}
					name := c.Args().First()
					if st, ok, _ := emulator.LoadState(home(), name); ok && labUp(st) {
						return fmt.Errorf("lab %s is already up (pid %d); 'labctl lab down %s' first", name, st.PID, name)
					}
					if c.Bool("foreground") {
						return serveLab(c.Context, name, engineIfSet(c), labGNMI(c), newLogger(false))
					}
					return spawnLab(c.Context, name, engineIfSet(c), labGNMI(c), format)
				},
			},
			{
				Name: "serve", Usage: "run an emulated lab in the foreground (what 'lab up' starts)", ArgsUsage: "LAB", Hidden: true,
				Flags: append([]cli.Flag{engineFlag}, labGNMIFlags...),
				Action: func(c *cli.Context) error {
					return serveLab(c.Context, c.Args().First(), engineIfSet(c), labGNMI(c), newLogger(false))
				},
			},
			{
				Name: "down", Usage: "stop an emulated lab (all of them if no LAB is given)", ArgsUsage: "[LAB]",
				Description: `Stops LAB, or every lab that is up, and clears its state. --format json
prints one array of {lab, was_running, note} for the labs it stopped, also
when another could not be stopped (the exit status says so).

Examples:
   labctl lab down leafspine:2x4:8@100
   labctl lab down --format json`,
				Flags: []cli.Flag{waitFlag, newFormatFlag(formatTable)},
				Action: func(c *cli.Context) error {
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					sts, err := selectStates(c.Args().First())
					if err != nil {
						return err
					}
					downs := []labDown{}
					var errs []error
					for _, st := range sts {
						release, err := takeLab(c.Context, st.Name, "lab down", c.Duration("wait"))
						if err != nil { // held by another: leave it up
							errs = append(errs, err)
							continue
						}
						gone, err := stopLab(st)
						if err != nil { // alive but not provably the lab's process: keep its state
							errs = append(errs, err)
							_ = release()
							continue
						}
						if err := release(); err != nil {
							errs = append(errs, err)
						}
						downs = append(downs, labDown{Lab: st.Name, WasRunning: gone == "", Note: gone})
					}
					if err := printDowns(format, downs); err != nil {
						errs = append(errs, err)
					}
					return errors.Join(errs...)
				},
			},
			{
				Name: "status", Usage: "show emulated labs and check their endpoints", ArgsUsage: "[LAB]",
				Flags: []cli.Flag{newFormatFlag(formatTable), jsonAlias},
				Action: func(c *cli.Context) error {
					o, err := parseOptions(c)
					if err != nil {
						return err
					}
					sts, err := selectStates(c.Args().First())
					if err != nil {
						if _, shared, lerr := labLease(c.Args().First()); lerr == nil && shared { // a hardware lab: only its holder
							return printHolder(c.Args().First(), o.Format)
						}
						return err
					}
					return printStatus(sts, o.Format)
				},
			},
			reserveCommand(),
			releaseCommand(),
			faultCommand(),
		},
	}
}

func selectStates(name string) ([]emulator.State, error) {
	if name == "" {
		return emulator.ListStates(home())
	}
	st, ok, err := emulator.LoadState(home(), name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no lab %q is up (see 'labctl lab status')", name)
	}
	return []emulator.State{st}, nil
}

// spawnLab re-executes labctl as 'lab serve' in its own session and waits
// until the lab has written its state.
func spawnLab(ctx context.Context, name, engine string, gnmi []string, format string) error {
	lab, err := inventory.ResolveWith(name, qosdriver.Builtin())
	if err != nil {
		return err
	}
	if err := ensureOpenFiles(lab); err != nil { // the lab inherits the limit: fail here, not in its log
		return err
	}
	dir := emulator.StateDir(home(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_ = emulator.RemoveState(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "lab.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, append(append([]string{"lab", "serve", "--engine", engine}, gnmi...), name)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if st, ok, _ := emulator.LoadState(home(), name); ok && st.PID == cmd.Process.Pid {
			return printLabUp(st, format)
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "lab.log"))
			return fmt.Errorf("lab %s failed to start (%v):\n%s", name, err, b)
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = cmd.Process.Kill()
	return fmt.Errorf("lab %s did not come up within 60s; see %s", name, filepath.Join(dir, "lab.log"))
}

func serveLab(ctx context.Context, name, engine string, gnmi []string, log *slog.Logger) error {
	lab, err := inventory.ResolveWith(name, qosdriver.Builtin())
	if err != nil {
		return err
	}
	if err := ensureOpenFiles(lab); err != nil {
		return err
	}
	dir := emulator.StateDir(home(), name)
	opt := emulator.Options{Dir: dir, Engine: engine, Logger: log}
	opt.GNMIPlaintext, opt.GNMIAuth = slices.Contains(gnmi, "--gnmi-plaintext"), slices.Contains(gnmi, "--gnmi-auth")
	l, err := emulator.Start(ctx, lab, opt)
	if err != nil {
		return err
	}
	defer l.Close()
	defer os.RemoveAll(filepath.Join(dir, "keys")) // the private key lives only as long as the lab
	ctlCtx, stopCtl := context.WithCancel(context.Background())
	defer stopCtl()
	if err := l.ServeControl(ctlCtx, emulator.ControlPath(dir)); err != nil { // labctl lab fault
		// e.g. a socket path beyond the 108 bytes unix sockets allow: the
		// lab serves all the same, without taking faults (lab fault says why)
		log.Warn("lab fault unavailable for this lab", "err", err)
	}
	labFile := filepath.Join(dir, "lab.yaml")
	if err := inventory.WriteFile(labFile, l.Inventory()); err != nil {
		return err
	}
	self := lease.SelfProcess()
	st := emulator.State{Name: name, Host: self.Host, PID: self.PID, PIDStart: self.Start, Cmdline: self.Cmdline,
		Dir: dir, LabFile: labFile, Started: time.Now().UTC()}
	if err := emulator.SaveState(st); err != nil {
		return err
	}
	defer emulator.RemoveState(dir)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	return nil
}

// labProcess is the process a lab's state names.
func labProcess(st emulator.State) lease.Process {
	return lease.Process{Host: st.Host, PID: st.PID, Start: st.PIDStart, Cmdline: st.Cmdline}
}

// labUp reports whether the lab's own process still runs (not merely a
// process with its pid): the same judge as a lease's holder.
func labUp(st emulator.State) bool { return labProcess(st).Gone() == "" }

// stopLab ends a lab's process, if it still is that lab's (lease.Process
// checks its start time and command line; a stranger that took the pid is
// never signalled), waits for it to go, and forgets the lab. A lab whose
// process is gone leaves its state to clean: its key directory too; gone
// says why it was not running ("" when it was and was stopped).
func stopLab(st emulator.State) (gone string, err error) {
	p := labProcess(st)
	if gone = p.Gone(); gone == "" {
		if err := p.Signal(syscall.SIGTERM); err != nil {
			return "", fmt.Errorf("lab %s: %w; its state stays in %s", st.Name, err, st.Dir)
		}
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && p.Gone() == ""; {
			time.Sleep(50 * time.Millisecond)
		}
		if p.Gone() == "" {
			return "", fmt.Errorf("lab %s: pid %d did not stop within 10s of SIGTERM", st.Name, st.PID)
		}
	}
	_ = emulator.RemoveState(st.Dir)
	return gone, os.RemoveAll(filepath.Join(st.Dir, "keys"))
}

// engineFlag picks the fabric twin's engine of an emulated lab.
var engineFlag = &cli.StringFlag{Name: "engine", Value: "packet",
	Usage: "fabric twin engine of an emulated lab: packet (every packet, PAUSE, ECN mark, CNP and retransmission simulated) " +
		"or flow (max-min sharing of bandwidth, no packets or queueing delay: about 9x faster at 128 hosts, 10-12x at 1,024, " +
		"right about bandwidth, tail FCTs several-fold low; see docs/fabric-twin.md; e.g. --engine flow)"}

// endpointStatus dials every endpoint of a lab file.
type endpointStatus struct {
	Device   string `json:"device"`
	Endpoint string `json:"endpoint"`
	Addr     string `json:"addr"`
	Up       bool   `json:"up"`
}

// labEndpoints are the endpoints a lab file names (Up unset): each
// switch's SSH and gNMI, each host's SSH.
func labEndpoints(lab *inventory.Lab) []endpointStatus {
	var out []endpointStatus
	add := func(dev, kind, addr string) {
		if addr != "" {
			out = append(out, endpointStatus{Device: dev, Endpoint: kind, Addr: addr})
		}
	}
	for _, s := range lab.Switches {
		add(s.Name, "ssh", s.Mgmt.SSH)
		add(s.Name, "gnmi", s.Mgmt.GNMI)
	}
	for _, h := range lab.Hosts {
		add(h.Name, "ssh", h.Mgmt.SSH)
	}
	return out
}

func printStatus(sts []emulator.State, format string) error {
	type labStatus struct {
		emulator.State
		Alive     bool             `json:"alive"`
		Lease     *lease.Lease     `json:"lease,omitempty"` // who holds the lab, if anyone
		Endpoints []endpointStatus `json:"endpoints,omitempty"`
	}
	var out []labStatus
	for _, st := range sts {
		ls := labStatus{State: st, Alive: labUp(st), Lease: holder(st.Name)}
		if lab, err := inventory.Load(st.LabFile); err == nil && ls.Alive {
			for _, e := range labEndpoints(lab) {
				c, err := net.DialTimeout("tcp", e.Addr, time.Second)
				if err == nil {
					c.Close()
				}
				e.Up = err == nil
				ls.Endpoints = append(ls.Endpoints, e)
			}
		}
		out = append(out, ls)
	}
	if out == nil {
		out = []labStatus{}
	}
	tf := func() table {
		t := table{Head: []string{"LAB", "PID", "ALIVE", "ENDPOINTS UP", "STARTED", "HELD BY", "LAB FILE"}}
		for _, ls := range out {
			up := 0
			for _, e := range ls.Endpoints {
				if e.Up {
					up++
				}
			}
			held := "-"
			if ls.Lease != nil {
				held = fmt.Sprintf("%s (%s) until %s", ls.Lease.Owner(), ls.Lease.Command, ls.Lease.Expires.Local().Format(time.TimeOnly))
			}
			t.add(ls.Name, strconv.Itoa(ls.PID), strconv.FormatBool(ls.Alive), fmt.Sprintf("%d/%d", up, len(ls.Endpoints)), ls.Started.Format(time.RFC3339), held, ls.LabFile)
		}
		if len(out) == 0 {
			t.Foot = []string{noLabUp}
		}
		return t
	}
	return printResult(os.Stdout, format, out, tf, func(w io.Writer) error {
		if len(out) == 0 {
			_, err := fmt.Fprintln(w, noLabUp)
			return err
		}
		return tf().aligned(w)
	})
}

const noLabUp = "no emulated lab is up ('labctl lab up leafspine:2x4:8@100' starts one)"

// twinOptions are the emulated lab's options for a scenario's emulation
// section (the engine, its schemes and its conventions).
func twinOptions(em scenarios.Emulation) emulator.Options {
	opt := emulator.Options{Engine: em.Engine, LB: em.LB, LBParams: em.LBParams, Transport: em.Transport,
		CNPOnNack: em.CNPOnNack, PauseQuanta: uint16(em.PFCPauseQuanta), ReorderQueues: em.ReorderQueues,
		PauseRefreshNs: int64(em.PFCRefreshUs * 1000)}
	if v := em.NackIntervalUs; v != nil {
		opt.NackIntervalNs = int64(*v * 1000)
		if opt.NackIntervalNs == 0 {
			opt.NackIntervalNs = -1 // once per expected PSN
		}
	}
	return opt
}
