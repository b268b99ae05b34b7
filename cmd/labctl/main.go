// Command labctl is the hardware-in-the-loop testbed controller for RDMA
// labs. This package only parses flags, wires packages together and prints.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp()
	stopProfile := startProfile(os.Getenv("LABCTL_CPUPROFILE"))
	err := app.RunContext(ctx, interspersed(app, os.Args))
	stopProfile()
	writeAllocs(os.Getenv("LABCTL_MEMPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "labctl:", err)
		os.Exit(exitCode(err))
	}
}

// startProfile writes a CPU profile of the whole process (controller and,
// for an emulated lab, the lab it started) to file, when one is named
// ($LABCTL_CPUPROFILE: bench/e2e.sh uses it to see where a run's time
// goes), until the returned function is called.
func startProfile(file string) func() {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "labctl: warning: cpu profile:", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// writeAllocs writes the process's allocation profile (what it allocated
// over its life, and what is still in use) to file, when one is named
// ($LABCTL_MEMPROFILE): where a large run's garbage comes from.
func writeAllocs(file string) {
	if file == "" {
		return
	}
	f, err := os.Create(file)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "labctl: warning: memory profile:", err)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "labctl",
		Usage:   "run RDMA (RoCEv2) experiments on a lab of Tofino switches and ConnectX hosts, or on the built-in emulated lab",
		Version: version,
		Description: `labctl drives the whole loop of an RDMA experiment: traffic (perftest over SSH,
started on a common epoch by a host agent), switch telemetry (gNMI into InfluxDB
and the run archive) and reports (FCT percentiles, goodput, PFC, queue depth).

Quick start, no hardware needed (runs on the built-in emulated leaf-spine):
   labctl run incast
   labctl report runs/<run-id> --format md

A lab is a YAML inventory file (see inventory/testdata/example-lab.yaml) or a
generated topology such as leafspine:2x4:8@100 (spines x leaves : hosts per leaf
@ Gb/s) or fattree:8@40,delay=5us (a k=8 fat-tree at 40 Gb/s with 5 us links;
1 us without delay=). Generated labs are emulated: every device is a real SSH/gNMI endpoint
on 127.0.0.1 backed by a fabric simulator.`,
		// every command first clears what a killed labctl left behind
		Before: func(*cli.Context) error {
			sweepTempLabs(func(m string) { fmt.Fprintln(os.Stderr, "labctl:", m) })
			return nil
		},
		Commands: []*cli.Command{
			runCommand(),
			workerCommand(),
			reportCommand(),
			runsCommand(),
			telemetryCommand(),
			compareCommand(),
			regressCommand(),
			capacityCommand(),
			papersCommand(),
			inventoryCommand(),
			leased(provisionCommand(), "apply", "rollback"), // changes the lab: one at a time
			leased(imageCommand(), "push", "activate", "rollback"),
			labCommand(),
		},
	}
}

// exitError carries a specific exit status (e.g. 2 for usage errors).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e, ok := err.(exitError); ok {
		return e.code
	}
	return 1
}
