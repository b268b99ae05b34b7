package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

func faultCommand() *cli.Command {
	return &cli.Command{
		Name:      "fault",
		Usage:     "inject a fault into a running emulated lab (drop or delay an endpoint, fail the next commit ...)",
		ArgsUsage: "LAB DEVICE KIND",
		Description: `Injects one fault into a lab started with 'labctl lab up', while it runs, so
that you can watch what your pipeline (a run, provisioning, your collectors)
does when a device misbehaves. It takes no lease: a fault is meant to hit a
run that holds the lab. The lab listens on a unix socket in its state
directory ($LABCTL_HOME/labs/<name>/control.sock, 0600 in a 0700 directory):
only its user can inject faults.

Kinds:
` + faultKindsHelp() + `
A drop closes the endpoint's live connections (a collector's gNMI stream, an
SSH session, a NETCONF session) and closes new ones as soon as they connect,
until --for has passed; then the endpoint works again. A delay lets clients
connect but holds each new connection silent for --delay (a slow daemon).
The fail-* kinds arm a one-shot failure of the device's next operation of
that kind. See docs/reliability.md for a chaos drill built from them.
--format json prints {lab, device, fault, state, message}: state is
"cleared" for clear, else "injected".

Examples:
   labctl lab fault leafspine:2x4:8@100 leaf1 drop-gnmi --for 10s
   labctl lab fault leafspine:2x4:8@100 h3 delay-ssh --delay 2s --for 1m
   labctl lab fault leafspine:2x4:8@100 spine1 fail-commit
   labctl lab fault leafspine:2x4:8@100 leaf1 clear
   labctl lab fault leafspine:2x4:8@100 leaf1 drop-gnmi --for 10s --format json | jq -r .state`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "for", Usage: "drop-*/delay-*: how long the fault lasts (e.g. 10s)"},
			&cli.DurationFlag{Name: "delay", Usage: "delay-*: how long each new connection is held silent (e.g. 2s)"},
			newFormatFlag(formatTable),
		},
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			if c.NArg() != 3 {
				return exitError{2, fmt.Errorf("lab fault needs LAB DEVICE KIND (got %d arguments); kinds: %s", c.NArg(), faultKindNames())}
			}
			name, device, kind := c.Args().Get(0), c.Args().Get(1), c.Args().Get(2)
			k, err := emulator.LookupFaultKind(kind)
			if err != nil {
				return exitError{2, err}
			}
			if strings.Contains(k.Needs, "for") && c.Duration("for") <= 0 {
				return exitError{2, fmt.Errorf("%s needs --for DURATION (e.g. --for 10s)", kind)}
			}
			if strings.Contains(k.Needs, "delay") && c.Duration("delay") <= 0 {
				return exitError{2, fmt.Errorf("%s needs --delay DURATION (e.g. --delay 2s)", kind)}
			}
			st, up, err := runningLab(name)
			if err != nil {
				return err
			}
			if !up {
				return exitError{2, fmt.Errorf("lab %s is not up: faults go to a lab started with 'labctl lab up %s'", name, name)}
			}
			if err := knownDevice(st, device); err != nil {
				return exitError{2, err}
			}
			msg, err := emulator.SendFault(c.Context, emulator.ControlPath(st.Dir),
				emulator.FaultRequest{Device: device, Kind: kind, For: c.Duration("for"), Delay: c.Duration("delay")})
			if err != nil {
				return fmt.Errorf("lab %s: %w", st.Name, err)
			}
			r := faultResult{Lab: st.Name, Device: device, Fault: kind, State: "injected", Message: msg}
			if kind == "clear" {
				r.State = "cleared"
			}
			return printAction(format, r, fmt.Sprintf("lab %s: %s", st.Name, msg),
				[]string{"LAB", "DEVICE", "FAULT", "STATE", "MESSAGE"}, []string{r.Lab, r.Device, r.Fault, r.State, r.Message})
		},
	}
}

// faultResult is what lab fault --format json prints: the lab's own
// message says what it did (connections closed, until when).
type faultResult struct {
	Lab     string `json:"lab"`
	Device  string `json:"device"`
	Fault   string `json:"fault"`
	State   string `json:"state"` // injected or cleared
	Message string `json:"message"`
}

// knownDevice checks device against the lab's exported file, so that a
// typo fails with the devices there are before the lab is asked.
func knownDevice(st emulator.State, device string) error {
	lab, err := inventory.Load(st.LabFile)
	if err != nil {
		return nil // the lab itself checks
	}
	if _, ok := lab.Switch(device); ok {
		return nil
	}
	if _, ok := lab.Host(device); ok {
		return nil
	}
	var sw, hosts []string
	for _, s := range lab.Switches {
		sw = append(sw, s.Name)
	}
	for _, h := range lab.Hosts {
		hosts = append(hosts, h.Name)
	}
	return fmt.Errorf("lab %s has no device %q; switches: %s; hosts: %s", st.Name, device, strings.Join(sw, ", "), abbreviate(hosts, 16))
}

func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s ... (%d in all)", strings.Join(names[:n], ", "), len(names))
}

func faultKindNames() string {
	var names []string
	for _, k := range emulator.FaultKinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

func faultKindsHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, k := range emulator.FaultKinds() {
		needs := map[string]string{"for": "--for", "for+delay": "--delay --for"}[k.Needs]
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", k.Name, k.Devices, needs, k.Help)
	}
	tw.Flush()
	return b.String()
}
