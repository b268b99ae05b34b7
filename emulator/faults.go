package emulator

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/labctl/labctl/emulator/sshd"
)

// Fault is a failure an emulated device produces once, when told to, so
// that tests exercise labctl's failure paths against the real endpoints.
type Fault int

const (
	// FaultCommit: the switch's next QoS commit fails: over NETCONF, the
	// commit answers an rpc-error; on a switch whose lab entry says
	// qos_driver: sde, the SDE shell's next script that writes tables
	// fails at its last write, as a hardware error would; on a SONiC
	// switch, the next config apply-patch fails after half its changes,
	// as one whose verification fails midway.
	FaultCommit Fault = iota + 1
	// FaultImageStart: the switch's next bf_switchd start cannot add its
	// device ("initialized 0 devices"): bf_switchd runs, but the program
	// is never loaded, so health never turns good.
	FaultImageStart
	// FaultSSHCommand: the device's next command over SSH (exec, not
	// SFTP) exits 1 with a message naming the device.
	FaultSSHCommand
	// FaultPortsDown: the switch's next bf_switchd start loads the
	// program, but the ports never come up (as with a bad cable map or
	// FEC mismatch).
	FaultPortsDown
)

func (f Fault) String() string {
	switch f {
	case FaultCommit:
		return "commit"
	case FaultImageStart:
		return "image-start"
	case FaultSSHCommand:
		return "ssh-command"
	case FaultPortsDown:
		return "ports-down"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// faultSet holds the faults armed per device; its zero value is ready.
type faultSet struct {
	mu    sync.Mutex
	armed map[string]map[Fault]bool
}

// FailNext makes device fail once as f says. Commit, image-start and
// ports-down faults are for switches; ssh-command for any device.
func (l *Lab) FailNext(device string, f Fault) error {
	kind, err := l.deviceKind(device)
	isSwitch := kind == "switch"
	switch {
	case err != nil:
		return err
	case f == FaultSSHCommand:
	case f != FaultCommit && f != FaultImageStart && f != FaultPortsDown:
		return fmt.Errorf("emulator: unknown fault %v", f)
	case !isSwitch:
		return fmt.Errorf("emulator: %s is a host; a %v fault is for switches", device, f)
	}
	l.faults.mu.Lock()
	defer l.faults.mu.Unlock()
	if l.faults.armed == nil {
		l.faults.armed = map[string]map[Fault]bool{}
	}
	if l.faults.armed[device] == nil {
		l.faults.armed[device] = map[Fault]bool{}
	}
	l.faults.armed[device][f] = true
	return nil
}

// take disarms and reports a fault armed for device.
func (fs *faultSet) take(device string, f Fault) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.armed[device][f] {
		return false
	}
	delete(fs.armed[device], f)
	return true
}

// wrap makes a device's exec handler honour FaultSSHCommand.
func (fs *faultSet) wrap(device string, exec sshd.ExecHandler) sshd.ExecHandler {
	return func(ctx context.Context, s *sshd.Session) int {
		if fs.take(device, FaultSSHCommand) {
			name, _, _ := strings.Cut(strings.TrimSpace(s.Command), " ")
			fmt.Fprintf(s.Stderr, "%s: %s: injected failure (emulator fault %v)\n", device, name, FaultSSHCommand)
			return 1
		}
		return exec(ctx, s)
	}
}

// deviceKind says whether device is a "switch" or a "host" of the lab, or
// returns an error that lists the devices there are.
func (l *Lab) deviceKind(device string) (string, error) {
	if _, ok := l.inv.Switch(device); ok {
		return "switch", nil
	}
	if _, ok := l.inv.Host(device); ok {
		return "host", nil
	}
	var names []string
	for _, s := range l.inv.Switches {
		names = append(names, s.Name)
	}
	for _, h := range l.inv.Hosts {
		names = append(names, h.Name)
	}
	const shown = 24
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" ... and %d more", len(names)-shown)
	}
	return "", fmt.Errorf("emulator: lab %s has no device %q (it has %s)", l.inv.Name, device, list)
}
