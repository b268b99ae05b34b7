package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentImports: the agent binary links the standard library, perftest
// and perftest/agent only; anything more makes every host's copy bigger.
func TestAgentImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/labctl/labctl/cmd/labctl-agent": true,
		"github.com/labctl/labctl/perftest":         true,
		"github.com/labctl/labctl/perftest/agent":   true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("labctl-agent links %s", p)
		}
	}
}
