package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/sonic"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// The emulated SONiC switch (a lab switch with os: sonic): its CONFIG_DB's
// QoS tables and the commands labctl's SONiC driver runs, with SONiC's
// file locations and messages:
//
//	sonic-cfggen -d --print-data | --var-json TABLE
//	config apply-patch [-d] [-v] [-f FORMAT] FILE   (RFC 6902, validated, all or nothing)
//	config checkpoint NAME | rollback NAME | delete-checkpoint NAME | list-checkpoints
//	config save -y
//	sonic-clear queue watermark unicast|multicast|all   (root only)
//	sudo COMMAND...
//
// Checkpoints are files under /etc/sonic/checkpoints (NAME.cp.json), as
// the generic config updater keeps them; config save writes
// /etc/sonic/config_db.json. When the lab picks the sonic driver for the
// switch, every change of CONFIG_DB (a patch, a rollback) becomes the
// switch's part of the twin, through the same parser the driver reads
// it back with.

const (
	sonicCheckpoints = "/etc/sonic/checkpoints"
	sonicConfigFile  = "/etc/sonic/config_db.json"
)

type sonicSwitch struct {
	lab   *Lab
	sw    inventory.Switch
	root  string
	ports []string

	mu sync.Mutex
	db sonic.DB
	// wmClears counts sonic-clear queue watermark commands (WatermarkClears).
	wmClears int
}

// rootKey marks a command sudo runs.
type rootKey struct{}

// addSONiC gives a switch's shell SONiC's commands, with CONFIG_DB at the
// twin's default QoS on every port.
func (l *Lab) addSONiC(sh *shell, sw inventory.Switch, root string) error {
	ports := sw.PortNames()
	if len(ports) == 0 {
		ports = []string{"Ethernet0"}
	}
	db, err := sonic.Render(sonic.DB{}, ports, defaultQoS(1))
	if err != nil {
		return fmt.Errorf("device %s: sonic: %w", sw.Name, err)
	}
	s := &sonicSwitch{lab: l, sw: sw, root: root, ports: ports, db: db}
	sh.cmds["sonic-cfggen"] = s.cfggen
	sh.cmds["config"] = s.config
	sh.cmds["sonic-clear"] = s.clear
	if l.sonic == nil {
		l.sonic = map[string]*sonicSwitch{}
	}
	l.sonic[sw.Name] = s
	sh.cmds["sudo"] = func(ctx context.Context, argv []string, ss *sshd.Session) int {
		if len(argv) < 2 {
			fmt.Fprintln(ss.Stderr, "usage: sudo command")
			return 1
		}
		c, ok := sh.cmds[path.Base(argv[1])]
		if !ok {
			fmt.Fprintf(ss.Stderr, "sudo: %s: command not found\n", argv[1])
			return 1
		}
		return c(context.WithValue(ctx, rootKey{}, true), argv[1:], ss)
	}
	return nil
}

// clear: sonic-clear queue watermark unicast|multicast|all, which needs
// root as sonic-utilities' does and prints nothing on success. The fabric
// twin restarts every queue's watermark before each point's traffic
// anyway (Twin.simulate); the shell counts the requests (WatermarkClears)
// so a test can see the driver's.
func (s *sonicSwitch) clear(ctx context.Context, argv []string, ss *sshd.Session) int {
	args := argv[1:]
	if len(args) != 3 || args[0] != "queue" || args[1] != "watermark" || !slices.Contains([]string{"unicast", "multicast", "all"}, args[2]) {
		fmt.Fprintf(ss.Stderr, "Usage: sonic-clear [OPTIONS] COMMAND [ARGS]...\nTry \"sonic-clear -h\" for help.\n\nError: No such command '%s'.\n", strings.Join(args, " "))
		return 2
	}
	if root, _ := ctx.Value(rootKey{}).(bool); !root {
		fmt.Fprintln(ss.Stderr, "Root privileges are required for this operation") // click: sys.exit(msg)
		return 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wmClears++
	return 0
}

// WatermarkClears is how many times switch sw's emulated SONiC shell was
// asked to clear its queue watermarks (0 for a switch that is not SONiC).
func (l *Lab) WatermarkClears(sw string) int {
	s, ok := l.sonic[sw]
	if !ok {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wmClears
}

// dump is CONFIG_DB as sonic-cfggen prints it: the QoS tables, with the
// device's metadata and ports beside them.
func (s *sonicSwitch) dump() map[string]any {
	out := map[string]any{}
	for t, v := range s.db {
		out[t] = v
	}
	out["DEVICE_METADATA"] = map[string]any{"localhost": map[string]string{
		"hostname": s.sw.Name, "hwsku": "labctl-emulated", "platform": "x86_64-labctl_emulated-r0",
		"type": "LeafRouter", "buffer_model": "traditional"}}
	ports := map[string]any{}
	for i, p := range s.sw.Ports {
		ports[p.Name] = map[string]string{"admin_status": "up", "index": strconv.Itoa(i + 1), "mtu": "9100",
			"speed": strconv.FormatInt(int64(p.SpeedGbps*1000), 10)}
	}
	out["PORT"] = ports
	return out
}

func printJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "    ")
	fmt.Fprintf(w, "%s\n", b)
}

// cfggen: sonic-cfggen -d --print-data, or -d --var-json TABLE.
func (s *sonicSwitch) cfggen(_ context.Context, argv []string, ss *sshd.Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := argv[1:]
	switch {
	case slices.Equal(args, []string{"-d", "--print-data"}):
		printJSON(ss.Stdout, s.dump())
		return 0
	case len(args) == 3 && args[0] == "-d" && args[1] == "--var-json":
		if t, ok := s.dump()[args[2]]; ok {
			printJSON(ss.Stdout, t)
		} else {
			fmt.Fprintln(ss.Stdout, "{}")
		}
		return 0
	}
	fmt.Fprintf(ss.Stderr, "usage: sonic-cfggen [-h] [-m [MINIGRAPH] | -d] ...\nsonic-cfggen: error: unrecognized arguments: %s\n", strings.Join(args, " "))
	return 2
}

// config: the generic config updater's subcommands labctl uses.
func (s *sonicSwitch) config(_ context.Context, argv []string, ss *sshd.Session) int {
	if len(argv) < 2 {
		fmt.Fprintln(ss.Stderr, "Usage: config [OPTIONS] COMMAND [ARGS]...")
		return 2
	}
	sub, args := argv[1], argv[2:]
	fail := func(usage, msg string) int {
		fmt.Fprintf(ss.Stderr, "Usage: config %s\nTry \"config %s -h\" for help.\n\nError: %s\n", usage, sub, msg)
		return 2
	}
	var operands []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || a == "--format" || a == "-i" || a == "--ignore-path":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			operands = append(operands, a)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch sub {
	case "apply-patch":
		if len(operands) != 1 {
			return fail("apply-patch [OPTIONS] PATCH_FILE_PATH", "Missing argument 'PATCH_FILE_PATH'.")
		}
		if err := s.applyPatch(operands[0], ss.Stdout); err != nil {
			fmt.Fprintf(ss.Stderr, "Failed to apply patch due to: %v\n", err)
			return fail("apply-patch [OPTIONS] PATCH_FILE_PATH", err.Error())
		}
		fmt.Fprintln(ss.Stdout, "Patch applied successfully.")
	case "checkpoint", "rollback", "delete-checkpoint":
		if len(operands) != 1 || strings.ContainsAny(operands[0], "/\x00") || operands[0] == "" {
			return fail(sub+" [OPTIONS] CHECKPOINT_NAME", "Missing or bad argument 'CHECKPOINT_NAME'.")
		}
		msg, err := s.checkpointOp(sub, operands[0])
		if err != nil {
			fmt.Fprintf(ss.Stderr, "Failed to %s due to: %v\n", map[string]string{"checkpoint": "create a config checkpoint: " + operands[0],
				"rollback": "rollback config", "delete-checkpoint": "delete config checkpoint: " + operands[0]}[sub], err)
			return fail(sub+" [OPTIONS] CHECKPOINT_NAME", err.Error())
		}
		fmt.Fprintln(ss.Stdout, msg)
	case "list-checkpoints":
		names := []string{}
		if r, err := os.OpenRoot(s.root); err == nil {
			if f, err := r.Open(rootRel(sonicCheckpoints)); err == nil {
				ents, _ := f.ReadDir(-1)
				f.Close()
				for _, e := range ents {
					if n, ok := strings.CutSuffix(e.Name(), ".cp.json"); ok {
						names = append(names, n)
					}
				}
			}
			r.Close()
		}
		printJSON(ss.Stdout, names)
	case "save":
		if err := s.writeFile(sonicConfigFile, s.dump()); err != nil {
			fmt.Fprintln(ss.Stderr, err)
			return 1
		}
		fmt.Fprintf(ss.Stdout, "Running command: /usr/local/bin/sonic-cfggen -d --print-data > %s\n", sonicConfigFile)
	default:
		return fail("[OPTIONS] COMMAND [ARGS]...", fmt.Sprintf("No such command '%s'.", sub))
	}
	return 0
}

// applyPatch applies the patch file to CONFIG_DB if the result is valid,
// else changes nothing; an armed commit fault leaves half the changes
// applied and fails, as a verification that fails midway does.
func (s *sonicSwitch) applyPatch(file string, out io.Writer) error {
	r, err := os.OpenRoot(s.root)
	if err != nil {
		return err
	}
	defer r.Close()
	data, err := r.ReadFile(rootRel(file))
	if err != nil {
		return fmt.Errorf("[Errno 2] No such file or directory: '%s'", file)
	}
	ops, err := sonic.ParsePatch(data)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Patch Applier: localhost: Patch application starting.")
	fmt.Fprintln(out, "Patch Applier: localhost: Getting current config db.")
	fmt.Fprintln(out, "Patch Applier: localhost: Simulating the target full config after applying the patch.")
	next, err := sonic.Apply(s.db, ops)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Patch Applier: localhost: Validating target config does not have empty tables, since they do not show up in ConfigDb.")
	for t, keys := range next {
		if len(keys) == 0 {
			return fmt.Errorf("Given patch will produce empty tables, which is not allowed. Empty tables: %s", t)
		}
	}
	if err := s.validate(next); err != nil {
		return fmt.Errorf("Given patch will produce invalid config. Error: %w", err)
	}
	fmt.Fprintf(out, "Patch Applier: localhost: Applying %d changes in order:\n", len(ops))
	if s.lab.faults.take(s.sw.Name, FaultCommit) {
		half, _ := sonic.Apply(s.db, ops[:len(ops)/2])
		s.set(half)
		return errors.New("After applying patch to config, there are still some parts not updated")
	}
	s.set(next)
	fmt.Fprintln(out, "Patch Applier: localhost: Verifying patch updates are reflected on ConfigDB.")
	fmt.Fprintln(out, "Patch Applier: localhost: Patch application completed.")
	return nil
}

// validate is the emulated switch's check of a CONFIG_DB: every port's
// QoS references resolve and pass the checks a switch profile passes,
// and each lossless profile's threshold kind fits its pool's mode.
func (s *sonicSwitch) validate(db sonic.DB) error {
	for _, p := range s.ports {
		q, err := sonic.ParseQoS(db, p)
		if err != nil {
			return err
		}
		if ps := q.Check(switchBufferBytes()); len(ps) > 0 {
			return fmt.Errorf("port %s: %s", p, ps[0])
		}
	}
	for name, prof := range db[sonic.TableBufferProfile] {
		pool, ok := db[sonic.TableBufferPool][prof["pool"]]
		if !ok {
			return fmt.Errorf("BUFFER_PROFILE|%s: pool %q does not exist", name, prof["pool"])
		}
		_, static := prof["static_th"]
		if static != (pool["mode"] == "static") && (static || prof["dynamic_th"] != "") {
			return fmt.Errorf("BUFFER_PROFILE|%s: a %s threshold in the %s pool %s", name,
				map[bool]string{true: "static", false: "dynamic"}[static], pool["mode"], prof["pool"])
		}
	}
	return nil
}

// set makes db CONFIG_DB and, when the sonic driver configures this
// switch, its part of the twin (its first port's QoS: the twin has one
// configuration per switch).
func (s *sonicSwitch) set(db sonic.DB) {
	s.db = db
	if !s.lab.twinFollows(s.sw.Name, qosdriver.SONiC) {
		return
	}
	q, err := sonic.ParseQoS(db, s.ports[0])
	if err != nil {
		s.lab.log.Warn("twin: cannot read CONFIG_DB's QoS", "device", s.sw.Name, "err", err)
		return
	}
	if err := s.lab.twin.configure(s.sw.Name, q); err != nil {
		s.lab.log.Warn("twin: cannot apply CONFIG_DB's QoS", "device", s.sw.Name, "err", err)
	}
}

func (s *sonicSwitch) checkpointOp(op, name string) (string, error) {
	file := path.Join(sonicCheckpoints, name+".cp.json")
	switch op {
	case "checkpoint":
		return "Checkpoint created successfully.", s.writeFile(file, s.dump())
	case "rollback":
		r, err := os.OpenRoot(s.root)
		if err != nil {
			return "", err
		}
		defer r.Close()
		data, err := r.ReadFile(rootRel(file))
		if err != nil {
			return "", fmt.Errorf("Checkpoint '%s' does not exist", name)
		}
		db, err := sonic.ParseDB(data)
		if err != nil {
			return "", err
		}
		s.set(db)
		return "Config rolled back successfully.", nil
	default:
		r, err := os.OpenRoot(s.root)
		if err != nil {
			return "", err
		}
		defer r.Close()
		if err := r.Remove(rootRel(file)); err != nil {
			return "", fmt.Errorf("Checkpoint '%s' does not exist", name)
		}
		return "Checkpoint deleted successfully.", nil
	}
}

func (s *sonicSwitch) writeFile(file string, v any) error {
	r, err := os.OpenRoot(s.root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(rootRel(path.Dir(file)), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(v, "", "    ")
	return r.WriteFile(rootRel(file), append(b, '\n'), 0o644)
}
