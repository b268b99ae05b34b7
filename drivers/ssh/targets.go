package ssh

import (
	"fmt"
	"slices"

	"github.com/labctl/labctl/inventory"
)

// Endpoint is one of a device's management endpoints (inventory.Mgmt).
type Endpoint string

// Endpoints a Target can reach.
const (
	EndpointSSH     Endpoint = "ssh"
	EndpointNETCONF Endpoint = "netconf"
)

func (e Endpoint) addr(m inventory.Mgmt) string {
	if e == EndpointNETCONF {
		return m.NETCONF
	}
	return m.SSH
}

// DeviceTarget is device name of lab (a switch or a host) at endpoint e,
// with the credential the lab gives it. What the lab lacks for it is an
// error naming the device and the lab.
func DeviceTarget(lab *inventory.Lab, name string, e Endpoint) (Target, error) {
	var m inventory.Mgmt
	if sw, ok := lab.Switch(name); ok {
		m = sw.Mgmt
	} else if h, ok := lab.Host(name); ok {
		m = h.Mgmt
	} else {
		return Target{}, fmt.Errorf("lab %s has no device %s", lab.Name, name)
	}
	addr := e.addr(m)
	if addr == "" {
		return Target{}, fmt.Errorf("device %s has no %s endpoint in lab %s", name, e, lab.Name)
	}
	cred, ok := lab.CredentialFor(name)
	if !ok {
		return Target{}, fmt.Errorf("device %s has no credential in lab %s", name, lab.Name)
	}
	return Target{Name: name, Addr: addr, Cred: cred}, nil
}

// SwitchTargets are lab's switches at endpoint e: all of them, or those
// named in only (in the lab's order).
func SwitchTargets(lab *inventory.Lab, only []string, e Endpoint) ([]Target, error) {
	for _, n := range only {
		if _, ok := lab.Switch(n); !ok {
			return nil, fmt.Errorf("lab %s has no switch %s", lab.Name, n)
		}
	}
	var ts []Target
	for _, sw := range lab.Switches {
		if len(only) > 0 && !slices.Contains(only, sw.Name) {
			continue
		}
		t, err := DeviceTarget(lab, sw.Name, e)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// HostTargets are lab's hosts at their SSH endpoints.
func HostTargets(lab *inventory.Lab) ([]Target, error) {
	ts := make([]Target, 0, len(lab.Hosts))
	for _, h := range lab.Hosts {
		t, err := DeviceTarget(lab, h.Name, EndpointSSH)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}
