package tofino

import (
	"context"
	"fmt"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// PortsScript is the bfrt_python script that prints, for each port
// (inventory names), whether it is up: bfrt's port.port $PORT_UP, one
// "labctl-tm portup <port> True|False" line each.
func PortsScript(ports []string) (string, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# labctl: port state (generated). Prints %s lines only.", readbackTag)
	for _, name := range ports {
		conn, chnl, err := ParsePortName(name)
		if err != nil {
			return "", err
		}
		w("dp = bfrt.port.port_hdl_info.get(CONN_ID=%d, CHNL_ID=%d, print_ents=False).data[b'$DEV_PORT']", conn, chnl)
		w("pt = bfrt.port.port.get(DEV_PORT=dp, print_ents=False).data")
		w("print('%s', 'portup', '%s', pt[b'$PORT_UP'])", readbackTag, name)
	}
	return b.String(), nil
}

// ParsePortsUp reads PortsScript's output and counts the ports that are
// up; every port must have its line.
func ParsePortsUp(out string, ports []string) (up int, err error) {
	state := map[string]bool{}
	for n, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != readbackTag || f[1] != "portup" {
			continue
		}
		if len(f) != 4 || (f[3] != "True" && f[3] != "False") {
			return 0, fmt.Errorf("port state line %d: want %q: %q", n+1, readbackTag+" portup <port> True|False", line)
		}
		state[f[2]] = f[3] == "True"
	}
	for _, p := range ports {
		on, ok := state[p]
		if !ok {
			return 0, fmt.Errorf("port state: no line for port %s", p)
		}
		if on {
			up++
		}
	}
	return up, nil
}

// PortsUp reads how many of the ports are up through the SDE shell.
func (d *SDEQoS) PortsUp(ctx context.Context, t sshdrv.Target, ports []string) (up, total int, err error) {
	script, err := PortsScript(ports)
	if err != nil {
		return 0, 0, fmt.Errorf("device %s: %w", t.Name, err)
	}
	out, err := d.run(ctx, t, "ports.py", script)
	if err != nil {
		return 0, 0, err
	}
	up, err = ParsePortsUp(out, ports)
	if err != nil {
		return 0, 0, fmt.Errorf("device %s: %w", t.Name, err)
	}
	return up, len(ports), nil
}
