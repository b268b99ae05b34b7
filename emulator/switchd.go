package emulator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/sshd"
)

// The emulated SDE on a switch: bf_switchd and run_switchd.sh with the
// command lines, printed lines and errors of hardware-surfaces 3.2.
//
// A switch comes up with a bf_switchd running the lab's default program
// (tofino.DefaultProgram, boot), as a switch whose init system starts the
// SDE does; labctl's image driver stops it like any other bf_switchd.
//
// bf_switchd reads its conf (tofino.ParseConf), checks that every artifact
// it names exists (relative paths under --install-dir, as on a real
// switch), prints its start-up lines through tofino.FormatSwitchdStart and
// runs until killed. When it loads an image labctl installed (image.yaml
// beside the conf), the image's load-balancing scheme becomes the one this
// switch forwards with in the fabric twin (twinlb.go), as its committed
// QoS becomes its twin switch's (twinqos.go). A scheme the twin has no
// module for makes adding the device fail, as a program the ASIC cannot run
// would. On the flow engine, which has no load-balancing modules, the
// scheme is noted in the log and has no effect.

const emulatedSDE = "/opt/bf-sde"

// bootLog is where the bf_switchd started at boot writes.
const bootLog = "/var/log/bf_switchd.log"

// bootConf is the conf of the default program the SDE boots with, under
// the emulated SDE's install directory.
var bootConf = path.Join(emulatedSDE, "install", "share/p4/targets/tofino", tofino.DefaultProgram+".conf")

// writeBootFiles installs, under a switch's root, the SDE's build of the
// default program: fake artifacts the emulated ASIC accepts, under
// $SDE_INSTALL/share/tofinopd/<program>, its conf under
// share/p4/targets/tofino (the layout of hardware-surfaces 3.1), and an
// empty boot log. Lab start writes every switch's at once, a few at a
// time (bootFilesAll): one switch after another, the directories and files
// of a 320-switch fat-tree took over a second.
func writeBootFiles(root string) error {
	install := path.Join(emulatedSDE, "install")
	prog := tofino.DefaultProgram
	dir := path.Join("share/tofinopd", prog)
	files := []struct{ name, data string }{
		{bootConf, fmt.Sprintf(`{"chip_list": [{"chip_family": "Tofino", "instance": 0}], "p4_devices": [{"device-id": 0, `+
			`"agent0": "lib/libpltfm_mgr.so", "p4_programs": [{"program-name": %q, "bfrt-config": "%s/bf-rt.json", `+
			`"p4_pipelines": [{"p4_pipeline_name": "pipe", "context": "%s/pipe/context.json", "config": "%s/pipe/tofino.bin", `+
			`"pipe_scope": [0, 1, 2, 3]}]}]}]}`+"\n", prog, dir, dir, dir)},
		{path.Join(install, dir, "bf-rt.json"), `{"schema_version": "1.0.0", "tables": []}` + "\n"},
		{path.Join(install, dir, "pipe/context.json"), fmt.Sprintf(`{"program_name": %q, "tables": []}`+"\n", prog)},
		{path.Join(install, dir, "pipe/tofino.bin"), "FAKE tofino.bin of the emulated switch's boot program\n"},
		{bootLog, ""},
	}
	made := map[string]bool{}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.name))
		if d := filepath.Dir(p); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made[d] = true
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// bootFilesAll writes the boot files of the switches (name -> root), a
// few at a time.
func bootFilesAll(roots map[string]string) error {
	var (
		mu   sync.Mutex
		errs []error
	)
	fewAtATime(maps.All(roots), func(name, root string) {
		if err := writeBootFiles(root); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("device %s: boot: %w", name, err))
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}

// boot starts bf_switchd with the default program in the background, as
// `run_switchd.sh -p <program>` at boot would, once its files are in
// place (writeBootFiles). The start is done when boot returns: the SDE
// shell answers at once.
func (sd *switchdev) boot() error {
	install := path.Join(emulatedSDE, "install")
	log, err := os.OpenFile(filepath.Join(sd.root, filepath.FromSlash(bootLog)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("device %s: %w", sd.name, err)
	}
	argv := []string{path.Join(install, "bin/bf_switchd"), "--install-dir", install, "--conf-file", bootConf,
		"--init-mode=cold", "--status-port", "7777", "--background"}
	cmdline := strings.Join(argv, " ")
	ctx, cancel := context.WithCancel(sd.life)
	pid := sd.sh.procs.start(cmdline, cancel)
	s := &sshd.Session{Command: cmdline, Stdin: strings.NewReader(""), Stdout: log, Stderr: log}
	if !sd.load(argv, s) {
		cancel()
		sd.sh.procs.exit(pid)
		log.Close()
		return fmt.Errorf("device %s: the boot bf_switchd did not start (see %s)", sd.name, bootLog)
	}
	go func() {
		defer log.Close()
		defer sd.sh.procs.exit(pid)
		<-ctx.Done()
		sd.exited()
	}()
	return nil
}

// bfSwitchd emulates $SDE_INSTALL/bin/bf_switchd: it starts (load) and
// runs until killed.
func (sd *switchdev) bfSwitchd(ctx context.Context, argv []string, s *sshd.Session) int {
	if !sd.load(argv, s) {
		return 1
	}
	<-ctx.Done() // runs until killed, with or without its CLI
	sd.exited()
	return 143
}

// load is bf_switchd's start up to its servers: it reads the conf, adds
// the device (a cold start: the SDE shell's tables start afresh, see
// Bfshell.coldStart) and prints its start-up lines. false: it exited.
func (sd *switchdev) load(argv []string, s *sshd.Session) bool {
	var install, conf string
	background := false
	for i := 1; i < len(argv); i++ {
		name, val, hasVal := strings.Cut(argv[i], "=")
		next := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch name {
		case "--install-dir":
			install = next()
		case "--conf-file":
			conf = next()
		case "--background":
			background = true
		case "--status-port", "--init-mode", "--p4rt-server", "--bfrt-grpc-port":
			next()
		}
	}
	if install == "" || conf == "" {
		fmt.Fprintln(s.Stderr, "ERROR: --install-dir and --conf-file must be specified")
		return false
	}
	r, ok := sd.fs(s, "bf_switchd")
	if !ok {
		return false
	}
	defer r.Close()
	start := tofino.SwitchdStart{InstallDir: install, ConfFile: conf, Family: "tofino", Devices: 1, Background: background,
		Agent: path.Join(install, "lib/libpltfm_mgr.so")}
	data, err := r.ReadFile(rootRel(conf))
	if err != nil {
		// The reference has this wording from run_switchd.sh only;
		// bf_switchd itself is taken to say the same.
		fmt.Fprintf(s.Stdout, "bf_switchd: loading conf_file %s...\n", conf)
		fmt.Fprintf(s.Stderr, "File %s not found\n", conf)
		return false
	}
	c, err := tofino.ParseConf(data)
	if err != nil {
		fmt.Fprintf(s.Stdout, "bf_switchd: loading conf_file %s...\n", conf)
		fmt.Fprintf(s.Stderr, "ERROR: %s: %v\n", conf, err)
		return false
	}
	if len(c.ChipFamilies) > 0 && c.ChipFamilies[0] != "" {
		start.Family = strings.ToLower(c.ChipFamilies[0])
	}
	abs := func(p string) string {
		if path.IsAbs(p) {
			return p
		}
		return path.Join(install, p)
	}
	for _, p := range c.Programs {
		p.BFRT = abs(p.BFRT)
		for i := range p.Pipelines {
			p.Pipelines[i].Context, p.Pipelines[i].Config = abs(p.Pipelines[i].Context), abs(p.Pipelines[i].Config)
		}
		start.Programs = append(start.Programs, p)
	}
	start.Error = sd.addDevice(r, start.Programs, conf)
	program := ""
	if start.Error == "" && len(start.Programs) > 0 {
		program = start.Programs[0].Name
	}
	if err := sd.sde.coldStart(program); err != nil {
		start.Error = "ERROR: device add failed for dev_id 0: " + err.Error()
		_ = sd.sde.coldStart("") // the device is not added: no program tables, nothing to fail
	}
	if start.Error != "" {
		start.Devices = 0
	}
	_ = tofino.FormatSwitchdStart(s.Stdout, start)
	if start.Error == "" {
		sd.setPortsUp(!sd.lab.faults.take(sd.name, FaultPortsDown))
	}
	return true
}

// exited is a running bf_switchd's end.
func (sd *switchdev) exited() {
	sd.setPortsUp(false)
	sd.sde.switchdExited()
}

// addDevice is what loading the programs onto the emulated ASIC checks;
// it returns the error bf_switchd prints before "initialized 0 devices",
// or "" when the device is added.
func (sd *switchdev) addDevice(r *os.Root, progs []tofino.ConfProgram, conf string) string {
	for _, p := range progs {
		files := []string{p.BFRT}
		for _, pl := range p.Pipelines {
			files = append(files, pl.Context, pl.Config)
		}
		for _, f := range files {
			if _, err := r.Stat(rootRel(f)); err != nil {
				return fmt.Sprintf("ERROR: device add failed for dev_id 0: program %s: %s: No such file or directory", p.Name, f)
			}
		}
	}
	if sd.lab.faults.take(sd.name, FaultImageStart) {
		return "ERROR: device add failed for dev_id 0 (emulator: injected image-start fault)"
	}
	raw, err := r.ReadFile(rootRel(path.Join(path.Dir(conf), tofino.ManifestFile)))
	if err != nil {
		return "" // not an image labctl installed: forwarding stays as it is
	}
	m, err := tofino.ParseManifest(raw, path.Join(path.Dir(conf), tofino.ManifestFile))
	if err != nil {
		return "ERROR: device add failed for dev_id 0: " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	if err := sd.lab.setImageLB(sd.name, m); err != nil {
		return fmt.Sprintf("ERROR: device add failed for dev_id 0: program %s: the emulated ASIC cannot run lb scheme %q: %v", m.Program, m.LB.Scheme, err)
	}
	return ""
}

// runSwitchd emulates $SDE/run_switchd.sh -p PROG [-c CONF] [--arch A]:
// it prints where things are and runs bf_switchd in the foreground.
func (sd *switchdev) runSwitchd(ctx context.Context, argv []string, s *sshd.Session) int {
	sde := s.Env["SDE"]
	if sde == "" {
		sde = emulatedSDE
	}
	install := s.Env["SDE_INSTALL"]
	if install == "" {
		install = path.Join(sde, "install")
	}
	prog, conf, target := "", "", "tofino"
	for i := 1; i+1 < len(argv); i++ {
		switch argv[i] {
		case "-p":
			i++
			prog = argv[i]
		case "-c":
			i++
			conf = argv[i]
		case "--arch":
			i++
			if strings.HasPrefix(argv[i], "tf2") {
				target = "tofino2"
			}
		}
	}
	if prog == "" && conf == "" {
		// UNCERTAIN wording: the script's usage text is not in the reference.
		fmt.Fprintln(s.Stderr, "Usage: run_switchd.sh -p <p4_program_name> [-c <conf_file>] [--arch tf1|tf2]")
		return 1
	}
	if conf == "" {
		conf = path.Join(install, "share/p4/targets", target, prog+".conf")
	}
	fmt.Fprintf(s.Stdout, "Using SDE %s\nUsing SDE_INSTALL %s\nSetting up DMA Memory Pool\nUsing TARGET_CONFIG_FILE %s\n", sde, install, conf)
	if r, ok := sd.fs(s, "run_switchd.sh"); ok {
		_, err := r.Stat(rootRel(conf))
		r.Close()
		if err != nil {
			fmt.Fprintf(s.Stdout, "File %s not found\n", conf)
			return 1
		}
	}
	fmt.Fprintf(s.Stdout, "Using PATH %s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n", install)
	fmt.Fprintf(s.Stdout, "Using LD_LIBRARY_PATH /usr/local/lib:%s/lib:\n", install)
	child := []string{path.Join(install, "bin/bf_switchd"), "--install-dir", install, "--conf-file", bootConf,
		"--init-mode=cold", "--status-port", "7777"}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pid := sd.sh.procs.start(strings.Join(child, " "), cancel) // the script runs bf_switchd as its child
	defer sd.sh.procs.exit(pid)
	return sd.bfSwitchd(cctx, child, s)
}
