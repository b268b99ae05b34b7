package emulator

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/labctl/labctl/emulator/sshd"
)

// command is one emulated program: it gets argv and the session's streams and
// returns the exit status, like a process.
type command func(ctx context.Context, argv []string, s *sshd.Session) int

// procTable is a device's running "processes", so pgrep and kill behave as
// on a real host and the runner's cleanup path is exercised for real.
type procTable struct {
	mu    sync.Mutex
	next  int
	procs map[int]*proc
}

type proc struct {
	cmdline string
	cancel  context.CancelFunc
}

func newProcTable() *procTable { return &procTable{next: 4000, procs: map[int]*proc{}} }

func (pt *procTable) start(cmdline string, cancel context.CancelFunc) int {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.next++
	pt.procs[pt.next] = &proc{cmdline: cmdline, cancel: cancel}
	return pt.next
}

func (pt *procTable) exit(pid int) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	delete(pt.procs, pid)
}

// shell dispatches exec requests on one emulated device.
type shell struct {
	device string
	cmds   map[string]command
	procs  *procTable
	// redirect handles "echo VALUE > FILE", the one redirection the
	// emulated shell knows (how sysfs settings are written); nil: none.
	redirect func(value, file string, s *sshd.Session) int
}

var echoRedirect = regexp.MustCompile(`^\s*echo\s+(\S+)\s*>\s*(\S+)\s*$`)

func newShell(device string) *shell {
	sh := &shell{device: device, cmds: map[string]command{}, procs: newProcTable()}
	sh.cmds["pgrep"] = sh.pgrep
	sh.cmds["kill"] = sh.kill
	sh.cmds["true"] = func(context.Context, []string, *sshd.Session) int { return 0 }
	sh.cmds["hostname"] = func(_ context.Context, _ []string, s *sshd.Session) int {
		fmt.Fprintln(s.Stdout, device)
		return 0
	}
	sh.cmds["echo"] = func(_ context.Context, argv []string, s *sshd.Session) int {
		fmt.Fprintln(s.Stdout, strings.Join(argv[1:], " "))
		return 0
	}
	return sh
}

// exec is the sshd.ExecHandler of the device.
func (sh *shell) exec(ctx context.Context, s *sshd.Session) int {
	if m := echoRedirect.FindStringSubmatch(s.Command); m != nil && sh.redirect != nil {
		return sh.redirect(m[1], m[2], s)
	}
	argv, err := splitWords(s.Command)
	if err != nil {
		fmt.Fprintf(s.Stderr, "sh: 1: Syntax error: %v\n", err)
		return 2
	}
	if len(argv) == 0 {
		return 0
	}
	name := argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:] // /tmp/labctl/bin/labctl runs as labctl
	}
	c, ok := sh.cmds[name]
	if !ok {
		fmt.Fprintf(s.Stderr, "sh: 1: %s: not found\n", argv[0])
		return 127
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pid := sh.procs.start(s.Command, cancel)
	defer sh.procs.exit(pid)
	return c(ctx, argv, s)
}

// pgrep [-f] PATTERN: lists matching pids (always matches the full command
// line, which is what labctl uses). Exit 1 when nothing matches, as procps.
func (sh *shell) pgrep(_ context.Context, argv []string, s *sshd.Session) int {
	args := argv[1:]
	if len(args) > 0 && args[0] == "-f" {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(s.Stderr, "pgrep: only one pattern can be provided")
		return 2
	}
	re, err := regexp.Compile(args[0])
	if err != nil {
		fmt.Fprintf(s.Stderr, "pgrep: %v\n", err)
		return 2
	}
	sh.procs.mu.Lock()
	var pids []int
	for pid, p := range sh.procs.procs {
		// pgrep never reports itself.
		if re.MatchString(p.cmdline) && !strings.HasPrefix(p.cmdline, "pgrep") {
			pids = append(pids, pid)
		}
	}
	sh.procs.mu.Unlock()
	sort.Ints(pids)
	for _, p := range pids {
		fmt.Fprintln(s.Stdout, p)
	}
	if len(pids) == 0 {
		return 1
	}
	return 0
}

// kill [-SIG] PID...: every signal ends the emulated process.
func (sh *shell) kill(_ context.Context, argv []string, s *sshd.Session) int {
	status := 0
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		pid, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintf(s.Stderr, "sh: 1: kill: illegal number: %s\n", a)
			status = 2
			continue
		}
		sh.procs.mu.Lock()
		p, ok := sh.procs.procs[pid]
		sh.procs.mu.Unlock()
		if !ok {
			fmt.Fprintf(s.Stderr, "sh: 1: kill: No such process\n")
			status = 1
			continue
		}
		p.cancel()
	}
	return status
}

// splitWords splits a command line as a POSIX shell would for simple
// commands: whitespace separates words; single quotes are literal; double
// quotes and backslashes escape. Pipes and redirections are not emulated.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quoted string")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unterminated quoted string")
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("|;&<>", c) >= 0:
			return nil, fmt.Errorf("%q is not supported by the emulated shell", string(c))
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
