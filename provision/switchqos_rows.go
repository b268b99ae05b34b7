package provision

import (
	"sort"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
)

// ViaSSH is how hosts' RNICs are set (a DeviceChange's Via).
const ViaSSH = "ssh"

// DeviceChange is one row of the lab-wide listing of differences: switches
// and RNIC hosts alike, one line per setting and device.
type DeviceChange struct {
	Device string `json:"device"`
	// Via is how the device is set: netconf or sde for switches, ssh for
	// hosts.
	Via string `json:"via"`
	// Where narrows the device: the RNIC of a host, the ports of a switch
	// when not all of its ports differ alike.
	Where   string `json:"where,omitempty"`
	Setting string `json:"setting"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// DeviceChanges lists switch and RNIC differences together, by device
// (switches first, in name order, then hosts), each device's settings in
// its driver's order.
func DeviceChanges(sw []SwitchChange, rn []connectx.Change) []DeviceChange {
	out := make([]DeviceChange, 0, len(sw)+len(rn))
	for _, c := range sw {
		out = append(out, DeviceChange{Device: c.Switch, Via: c.Driver, Where: strings.Join(c.Ports, ","), Setting: c.Field, From: c.From, To: c.To})
	}
	nsw := len(out)
	for _, c := range rn {
		out = append(out, DeviceChange{Device: c.Host, Via: ViaSSH, Where: c.Device, Setting: c.Field, From: c.From, To: c.To})
	}
	sort.SliceStable(out[:nsw], func(i, j int) bool { return out[i].Device < out[j].Device })
	hosts := out[nsw:]
	sort.SliceStable(hosts, func(i, j int) bool { return hosts[i].Device < hosts[j].Device })
	return out
}
