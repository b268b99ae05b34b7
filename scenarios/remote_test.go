package scenarios

import (
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/shtest"
	"github.com/labctl/labctl/perftest/agent"
)

// TestAgentCommandLineKeepsEachValueOneWord: the host name, schedule and
// output paths in the command that starts the agent reach the host's
// shell each as one word, whatever they hold (names are checked at load
// too; this is the second line of defence). The agent runs perftest with
// an argv, not through a shell.
func TestAgentCommandLineKeepsEachValueOneWord(t *testing.T) {
	t.Parallel()
	for _, v := range shtest.Hostile {
		sched, out := "/run/"+v+"/sched.json", "/run/"+v+"/out"
		cmd := agentCommand(strings.Repeat("ab", 32), sched, v, out, 4)
		want := []string{agent.BinaryPath(strings.Repeat("ab", 32)), "run", "--schedule", sched, "--host", v, "--out", out, "--sha256", strings.Repeat("ab", 32), "--max-concurrent", "4"}
		if got := shtest.Words(t, cmd); !slices.Equal(got, want) {
			t.Errorf("%q: the shell splits %q into %q", v, cmd, got)
		}
	}
}
