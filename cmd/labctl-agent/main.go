// Command labctl-agent is the host agent labctl ships to hosts: it runs a
// host's part of a traffic schedule (perftest servers and clients on the
// point's common epoch) and writes per-flow results (perftest/agent).
//
// It is a binary of its own so that what travels to every host is small:
// it must link only perftest and perftest/agent (no emulator, gNMI,
// InfluxDB or CLI packages; TestAgentImports checks).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/labctl/labctl/perftest/agent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Println(version())
		return
	}
	code := agent.Main(ctx, os.Args[1:], agent.LocalEnv(os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "labctl-agent (unknown version)"
	}
	v := "labctl-agent " + bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}
