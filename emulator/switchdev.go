package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/labctl/labctl/emulator/sshd"
)

// switchdev is an emulated Tofino switch's operating system as labctl's
// image driver uses it: coreutils on the switch's files (the same tree its
// SFTP server serves), start-stop-daemon, and the SDE's bf_switchd and
// run_switchd.sh (switchd.go).
type switchdev struct {
	lab  *Lab
	name string
	root string
	sh   *shell
	// life is the lab's: a process start-stop-daemon detaches outlives
	// the SSH session that started it and ends with the lab (or a kill).
	life context.Context
	sde  *Bfshell // the SDE shell, whose tables each bf_switchd start renews

	mu sync.Mutex
	up bool // a bf_switchd runs with its device added and the ports up
}

// portsUp says whether the switch's front-panel ports are up: only while
// a bf_switchd that added its device runs (what $PORT_UP of bfrt's
// port.port table reads).
func (sd *switchdev) portsUp() bool { sd.mu.Lock(); defer sd.mu.Unlock(); return sd.up }

func (sd *switchdev) setPortsUp(up bool) { sd.mu.Lock(); sd.up = up; sd.mu.Unlock() }

// addSwitchd gives a switch's shell the commands of switchdev.
func (l *Lab) addSwitchd(life context.Context, sh *shell, name, root string) *switchdev {
	sd := &switchdev{lab: l, name: name, root: root, sh: sh, life: life}
	files := &host{root: root} // a host's cat and sha256sum work on any device's root
	sh.cmds["cat"] = files.cat
	sh.cmds["sha256sum"] = files.sha256sum
	sh.cmds["mkdir"] = sd.mkdir
	sh.cmds["rm"] = sd.rm
	sh.cmds["mv"] = sd.mv
	sh.cmds["start-stop-daemon"] = sd.startStopDaemon
	sh.cmds["bf_switchd"] = sd.bfSwitchd
	sh.cmds["run_switchd.sh"] = sd.runSwitchd
	return sd
}

// rootRel maps an absolute path on the device to a name in its root.
func rootRel(p string) string {
	if r := strings.TrimPrefix(path.Clean("/"+p), "/"); r != "" {
		return r
	}
	return "."
}

// fs opens the device's root; every access through it stays inside.
func (sd *switchdev) fs(s *sshd.Session, tool string) (*os.Root, bool) {
	r, err := os.OpenRoot(sd.root)
	if err != nil {
		fmt.Fprintf(s.Stderr, "%s: %v\n", tool, err)
		return nil, false
	}
	return r, true
}

// flags splits argv into single-letter flags (combined as in -rf) and
// operands; long options are mapped to letters by long.
func flags(argv []string, long map[string]byte) (set map[byte]bool, args []string, bad string) {
	set = map[byte]bool{}
	for i, a := range argv[1:] {
		switch {
		case a == "--":
			return set, append(args, argv[i+2:]...), ""
		case strings.HasPrefix(a, "--"):
			c, ok := long[a]
			if !ok {
				return nil, nil, a
			}
			set[c] = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				set[a[j]] = true
			}
		default:
			args = append(args, a)
		}
	}
	return set, args, ""
}

// mkdir [-p] DIR...
func (sd *switchdev) mkdir(_ context.Context, argv []string, s *sshd.Session) int {
	set, dirs, bad := flags(argv, map[string]byte{"--parents": 'p'})
	if bad != "" || len(dirs) == 0 {
		fmt.Fprintf(s.Stderr, "mkdir: missing operand\nTry 'mkdir --help' for more information.\n")
		return 1
	}
	r, ok := sd.fs(s, "mkdir")
	if !ok {
		return 1
	}
	defer r.Close()
	status := 0
	for _, d := range dirs {
		var err error
		if set['p'] {
			err = r.MkdirAll(rootRel(d), 0o755)
		} else {
			err = r.Mkdir(rootRel(d), 0o755)
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "mkdir: cannot create directory '%s': %s\n", d, errText(err))
			status = 1
		}
	}
	return status
}

// rm [-f] [-r] FILE...
func (sd *switchdev) rm(_ context.Context, argv []string, s *sshd.Session) int {
	set, files, bad := flags(argv, map[string]byte{"--force": 'f', "--recursive": 'r'})
	if bad != "" {
		fmt.Fprintf(s.Stderr, "rm: unrecognized option '%s'\n", bad)
		return 1
	}
	force, recursive := set['f'], set['r'] || set['R']
	r, ok := sd.fs(s, "rm")
	if !ok {
		return 1
	}
	defer r.Close()
	status := 0
	for _, f := range files {
		name := rootRel(f)
		if name == "." && recursive {
			fmt.Fprintf(s.Stderr, "rm: it is dangerous to operate recursively on '/'\nrm: use --no-preserve-root to override this failsafe\n")
			status = 1
			continue
		}
		fi, err := r.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist) && force:
			continue
		case err != nil:
		case fi.IsDir() && !recursive:
			err = syscall.EISDIR
		case fi.IsDir():
			err = r.RemoveAll(name)
		default:
			err = r.Remove(name)
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "rm: cannot remove '%s': %s\n", f, errText(err))
			status = 1
		}
	}
	return status
}

// mv [-T] SRC DST: -T treats DST as the new name even if it is a
// directory, and fails if it is one that is not empty.
func (sd *switchdev) mv(_ context.Context, argv []string, s *sshd.Session) int {
	set, args, bad := flags(argv, map[string]byte{"--no-target-directory": 'T'})
	if bad != "" || len(args) != 2 {
		fmt.Fprintf(s.Stderr, "mv: only 'mv [-T] SOURCE DEST' is emulated\n")
		return 1
	}
	src, dst := args[0], args[1]
	r, ok := sd.fs(s, "mv")
	if !ok {
		return 1
	}
	defer r.Close()
	if _, err := r.Lstat(rootRel(src)); err != nil {
		fmt.Fprintf(s.Stderr, "mv: cannot stat '%s': %s\n", src, errText(err))
		return 1
	}
	to := rootRel(dst)
	if fi, err := r.Stat(to); err == nil && fi.IsDir() && !set['T'] {
		to = path.Join(to, path.Base(rootRel(src)))
	}
	if err := r.Rename(rootRel(src), to); err != nil {
		msg := errText(err)
		if errors.Is(err, syscall.EEXIST) { // rename(2) onto a directory that is not empty
			msg = "Directory not empty"
		}
		fmt.Fprintf(s.Stderr, "mv: cannot move '%s' to '%s': %s\n", src, dst, msg)
		return 1
	}
	return 0
}

// errText is how coreutils word an error.
func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, syscall.ENOTEMPTY):
		return "Directory not empty"
	case errors.Is(err, fs.ErrExist):
		return "File exists"
	case errors.Is(err, syscall.EISDIR):
		return "Is a directory"
	case errors.Is(err, syscall.ENOTDIR):
		return "Not a directory"
	}
	return err.Error()
}

// startStopDaemon emulates Debian's start-stop-daemon --start: with
// --background it runs the program detached from the session (a process
// pgrep sees and kill ends), writes its pid with --make-pidfile and its
// output to --output. --stop and --status are not emulated: labctl stops
// bf_switchd with pgrep and kill.
func (sd *switchdev) startStopDaemon(ctx context.Context, argv []string, s *sshd.Session) int {
	var start, background, makePid bool
	var pidfile, output, exe string
	var args []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		val := func() string {
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch a {
		case "--start", "-S":
			start = true
		case "--background", "-b":
			background = true
		case "--make-pidfile", "-m":
			makePid = true
		case "--pidfile", "-p":
			pidfile = val()
		case "--output", "-O":
			output = val()
		case "--exec", "-x":
			exe = val()
		case "--chdir", "-d":
			val()
		case "--quiet", "-q", "--oknodo", "-o":
		case "--":
			args, i = argv[i+1:], len(argv)
		case "--stop", "-K", "--status", "-T":
			fmt.Fprintf(s.Stderr, "start-stop-daemon: %s is not emulated\n", a)
			return 2
		default:
			fmt.Fprintf(s.Stderr, "start-stop-daemon: unrecognized option '%s'\nTry 'start-stop-daemon --help' for more information.\n", a)
			return 2
		}
	}
	if !start {
		fmt.Fprintf(s.Stderr, "start-stop-daemon: need one of --start or --stop or --status\nTry 'start-stop-daemon --help' for more information.\n")
		return 2
	}
	if exe == "" {
		fmt.Fprintf(s.Stderr, "start-stop-daemon: need at least one of --exec, --pid, --ppid, --pidfile, --user or --name\n")
		return 2
	}
	prog, ok := sd.sh.cmds[path.Base(exe)]
	if !ok {
		fmt.Fprintf(s.Stderr, "start-stop-daemon: unable to stat %s (No such file or directory)\n", exe)
		return 2
	}
	r, ok := sd.fs(s, "start-stop-daemon")
	if !ok {
		return 2
	}
	defer r.Close()
	if pidfile != "" && sd.running(r, pidfile) {
		fmt.Fprintf(s.Stdout, "%s already running.\n", exe)
		return 1
	}
	full := append([]string{exe}, args...)
	cmdline := strings.Join(full, " ")
	if !background {
		return prog(ctx, full, s)
	}
	var out io.WriteCloser = nopWriteCloser{io.Discard}
	if output != "" {
		f, err := r.OpenFile(rootRel(output), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(s.Stderr, "start-stop-daemon: unable to open output file %s (%s)\n", output, errText(err))
			return 2
		}
		out = f
	}
	pctx, cancel := context.WithCancel(sd.life)
	pid := sd.sh.procs.start(cmdline, cancel)
	if makePid {
		if err := r.WriteFile(rootRel(pidfile), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			cancel()
			sd.sh.procs.exit(pid)
			out.Close()
			fmt.Fprintf(s.Stderr, "start-stop-daemon: unable to open pidfile '%s' for writing (%s)\n", pidfile, errText(err))
			return 2
		}
	}
	go func() {
		defer cancel()
		defer sd.sh.procs.exit(pid)
		defer out.Close()
		prog(pctx, full, &sshd.Session{Command: cmdline, Env: s.Env, User: s.User, Stdin: strings.NewReader(""), Stdout: out, Stderr: out})
	}()
	return 0
}

// running says whether the pid in pidfile is a live process.
func (sd *switchdev) running(r *os.Root, pidfile string) bool {
	b, err := r.ReadFile(rootRel(pidfile))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return false
	}
	sd.sh.procs.mu.Lock()
	defer sd.sh.procs.mu.Unlock()
	_, ok := sd.sh.procs.procs[pid]
	return ok
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
