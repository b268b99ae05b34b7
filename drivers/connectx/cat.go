package connectx

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// Files that exist on some hosts and not on others (hw_counters by
// firmware, debugfs cc_params by kernel) are read with one `cat` over all
// of them: cat goes on past an absent file, naming it on stderr ("cat:
// <file>: No such file or directory") and exiting 1, so its output says
// which files exist and what they hold.

// catCommand reads files with one cat.
func catCommand(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = sshdrv.Quote(f) // a name the inventory let through is still one word
	}
	return "cat " + strings.Join(q, " ")
}

// parseCat reads catCommand's output: stdout holds one whitespace-free
// value per file that exists, in order; stderr names the absent ones.
// Values are returned by file. Any other complaint on stderr (permission
// denied) is an error naming what was read.
func parseCat(what string, files []string, stdout, stderr string) (map[string]string, error) {
	absent := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		rest, ok := strings.CutPrefix(line, "cat: ")
		file, ok2 := strings.CutSuffix(rest, ": No such file or directory")
		if !ok || !ok2 {
			return nil, fmt.Errorf("%s: cat said %q", what, line)
		}
		absent[file] = true
	}
	values := strings.Fields(stdout)
	out := make(map[string]string, len(files))
	i := 0
	for _, f := range files {
		if absent[f] {
			continue
		}
		if i >= len(values) {
			return nil, fmt.Errorf("%s: %d values for %d files present", what, len(values), len(files)-len(absent))
		}
		out[f] = values[i]
		i++
	}
	if i != len(values) {
		return nil, fmt.Errorf("%s: %d values for %d files present", what, len(values), i)
	}
	return out, nil
}

// catPresent runs catCommand over files on a host: its stdout, and its
// stderr when some files are absent (cat exits 1 and names them).
func catPresent(ctx context.Context, run Run, files []string) (stdout, stderr string, err error) {
	out, err := run(ctx, catCommand(files))
	var ce *sshdrv.CommandError
	if errors.As(err, &ce) && ce.ExitStatus == 1 {
		return string(out), ce.Message, nil
	}
	return string(out), "", err
}
