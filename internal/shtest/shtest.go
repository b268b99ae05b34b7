package shtest

import (
	"os/exec"
	"strings"
	"testing"
)

// Hostile are values that a POSIX shell would split, expand or run if they
// reached it unquoted. Their payloads are harmless builtins: a failure
// shows as the word INJECTED in the wrong place, not as damage.
var Hostile = []string{"a;echo INJECTED", "$(echo INJECTED)", "`echo INJECTED`", "a b", "a'b", `a"b`, "a\nb", `a\b`,
	"-rf", "*", "a|echo INJECTED", "a&&echo INJECTED"}

// Words is how /bin/sh splits cmd into words (globbing off): `set --`
// takes the words, printf ends each with a NUL. A command that redirects
// its output ("echo 1 > FILE", as sysfs writes do) is split at its " > ",
// and FILE must be one word too. Anything else the shell ran prints into
// the words, which then differ from what the caller expects.
func Words(tb testing.TB, cmd string) []string {
	tb.Helper()
	parts := []string{cmd}
	if head, file, ok := strings.Cut(cmd, " > "); ok && strings.HasPrefix(cmd, "echo ") {
		parts = []string{head, file}
	}
	var words []string
	for _, p := range parts {
		out, err := exec.Command("/bin/sh", "-c", "set -f; set -- "+p+"\nprintf '%s\\0' \"$@\"").CombinedOutput()
		if err != nil {
			tb.Fatalf("sh: %q: %v: %s", cmd, err, out)
		}
		w := strings.Split(string(out), "\x00")
		words = append(words, w[:len(w)-1]...)
	}
	return words
}
