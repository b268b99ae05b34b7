package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The control channel lets another process (labctl lab fault) inject
// faults into a running lab: a unix socket in the lab's state directory.
// The directory is 0700 and the socket 0600, so only the lab's user can
// reach it; the server also checks the peer's uid (SO_PEERCRED). One
// request per connection: a JSON FaultRequest line, answered by one JSON
// line.

// ControlPath is where a lab whose state directory is dir listens.
func ControlPath(dir string) string { return filepath.Join(dir, "control.sock") }

// FaultRequest asks a running lab for one fault.
type FaultRequest struct {
	Device string        `json:"device"`
	Kind   string        `json:"kind"`            // one of FaultKinds
	For    time.Duration `json:"for,omitempty"`   // drop/delay: how long
	Delay  time.Duration `json:"delay,omitempty"` // delay: how long each new connection is held
}

type faultReply struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

// FaultKind describes one kind of fault lab fault can inject.
type FaultKind struct {
	Name    string
	Devices string // "switch" or "any"
	Needs   string // "for", "for+delay" or "" (a one-shot failure)
	Help    string
}

// FaultKinds lists the faults a running lab takes, in the order help
// shows them.
func FaultKinds() []FaultKind {
	var out []FaultKind
	for _, ep := range []Endpoint{EndpointSSH, EndpointNETCONF, EndpointGNMI} {
		dev := "switch"
		if ep == EndpointSSH {
			dev = "any"
		}
		help := fmt.Sprintf("close the live %s connections and refuse new ones for --for", ep)
		if ep == EndpointSSH {
			help += " (a switch's NETCONF rides on it)"
		}
		out = append(out, FaultKind{"drop-" + string(ep), dev, "for", help})
	}
	for _, ep := range []Endpoint{EndpointSSH, EndpointNETCONF, EndpointGNMI} {
		dev := "switch"
		if ep == EndpointSSH {
			dev = "any"
		}
		out = append(out, FaultKind{"delay-" + string(ep), dev, "for+delay",
			fmt.Sprintf("hold every new %s connection silent for --delay, during --for", ep)})
	}
	return append(out,
		FaultKind{"fail-commit", "switch", "", "fail the next QoS commit (NETCONF rpc-error, or the SDE's last table write)"},
		FaultKind{"fail-image-start", "switch", "", "the next bf_switchd start loads no device"},
		FaultKind{"fail-ports-down", "switch", "", "the next bf_switchd start leaves the ports down"},
		FaultKind{"fail-ssh-command", "any", "", "the next command over SSH exits 1"},
		FaultKind{"clear", "any", "", "end the device's drops and delays now"},
		FaultKind{"gnmi-restart", "switch", "", "restart the switch's gNMI server: every stream ends and it serves again on the same address (down for --for, 0 if not given)"},
		FaultKind{"garble-gnmi", "switch", "for", `for --for, every port's priority-3 PFC rx count in COUNTERS_DB reads "N/A", as on a platform without it (collectors record each such sample as a gap)`},
	)
}

// LookupFaultKind finds kind, or returns an error listing the kinds.
func LookupFaultKind(kind string) (FaultKind, error) {
	var names []string
	for _, k := range FaultKinds() {
		if k.Name == kind {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return FaultKind{}, fmt.Errorf("unknown fault kind %q (known: %s)", kind, strings.Join(names, ", "))
}

var failNext = map[string]Fault{"fail-commit": FaultCommit, "fail-image-start": FaultImageStart,
	"fail-ports-down": FaultPortsDown, "fail-ssh-command": FaultSSHCommand}

// Inject applies req to the lab and says what it did; ctx bounds a fault
// that takes time to apply (a restart).
func (l *Lab) Inject(ctx context.Context, req FaultRequest) (string, error) {
	k, err := LookupFaultKind(req.Kind)
	if err != nil {
		return "", err
	}
	dev, err := l.deviceKind(req.Device)
	if err != nil {
		return "", err
	}
	if k.Devices == "switch" && dev != "switch" {
		return "", fmt.Errorf("%s is a host; %s is for switches", req.Device, k.Name)
	}
	if strings.Contains(k.Needs, "for") && req.For <= 0 {
		return "", fmt.Errorf("%s needs a positive duration (--for)", k.Name)
	}
	if strings.Contains(k.Needs, "delay") && req.Delay <= 0 {
		return "", fmt.Errorf("%s needs a positive --delay", k.Name)
	}
	until := time.Now().Add(req.For).Format(time.TimeOnly)
	action, ep, _ := strings.Cut(k.Name, "-")
	switch {
	case k.Name == "clear":
		return fmt.Sprintf("%s: drops and delays cleared", req.Device), l.ClearEndpoints(req.Device)
	case action == "drop":
		n, err := l.DropEndpoint(req.Device, Endpoint(ep), req.For)
		return fmt.Sprintf("%s: %s dropped until %s (%d live connections closed)", req.Device, ep, until, n), err
	case action == "delay":
		err := l.DelayEndpoint(req.Device, Endpoint(ep), req.Delay, req.For)
		return fmt.Sprintf("%s: new %s connections held %s until %s", req.Device, ep, req.Delay, until), err
	}
	if k.Name == "garble-gnmi" {
		return fmt.Sprintf("%s: a PFC counter reads N/A until %s", req.Device, until), l.GarbleGNMI(req.Device, req.For)
	}
	if k.Name == "gnmi-restart" {
		err := l.RestartGNMIFor(ctx, req.Device, max(req.For, 0))
		return fmt.Sprintf("%s: gNMI server restarted (down %s)", req.Device, max(req.For, 0)), err
	}
	f := failNext[k.Name]
	return fmt.Sprintf("%s: the next %v fails", req.Device, f), l.FailNext(req.Device, f)
}

// ServeControl listens on path (a stale socket from a crashed lab is
// replaced) and applies the requests it gets until ctx ends.
func (l *Lab) ServeControl(ctx context.Context, path string) error {
	_ = os.Remove(path)
	lis, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("lab %s: control socket: %w", l.inv.Name, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return fmt.Errorf("lab %s: control socket: %w", l.inv.Name, err)
	}
	go func() {
		<-ctx.Done()
		lis.Close()
		os.Remove(path)
	}()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go l.control(c)
		}
	}()
	return nil
}

func (l *Lab) control(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var rep faultReply
	var req FaultRequest
	switch line, err := bufio.NewReader(c).ReadBytes('\n'); {
	case !sameUser(c):
		rep.Error = "permission denied: not the lab's user"
	case err != nil:
		rep.Error = fmt.Sprintf("reading request: %v", err)
	case json.Unmarshal(line, &req) != nil:
		rep.Error = "malformed request"
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rep.Message, err = l.Inject(ctx, req)
		cancel()
		if err != nil {
			rep.Error = strings.TrimPrefix(err.Error(), "emulator: ")
		} else {
			l.log.Warn("fault injected", "device", req.Device, "kind", req.Kind, "for", req.For, "delay", req.Delay)
		}
	}
	_ = json.NewEncoder(c).Encode(rep)
}

// sameUser checks the peer's uid (the socket's mode already keeps others
// out; this holds if the directory's mode was loosened).
func sameUser(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}

// SendFault asks the lab listening on path for req and returns its answer.
func SendFault(ctx context.Context, path string, req FaultRequest) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return "", fmt.Errorf("control socket %s: %w (is the lab up, started by this labctl version, with a state path short enough for a unix socket? its lab.log says)", path, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return "", fmt.Errorf("control socket %s: %w", path, err)
	}
	var rep faultReply
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		return "", fmt.Errorf("control socket %s: %w", path, err)
	}
	if rep.Error != "" {
		return "", errors.New(rep.Error)
	}
	return rep.Message, nil
}
