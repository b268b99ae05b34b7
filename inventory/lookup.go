package inventory

// Switch finds a switch by name.
func (l *Lab) Switch(name string) (*Switch, bool) {
	for i := range l.Switches {
		if l.Switches[i].Name == name {
			return &l.Switches[i], true
		}
	}
	return nil, false
}

// Host finds a host by name.
func (l *Lab) Host(name string) (*Host, bool) {
	for i := range l.Hosts {
		if l.Hosts[i].Name == name {
			return &l.Hosts[i], true
		}
	}
	return nil, false
}

// HostByIP finds the host and RNIC that own a RoCE address.
func (l *Lab) HostByIP(ip string) (*Host, *RNIC, bool) {
	for i := range l.Hosts {
		for j := range l.Hosts[i].RNICs {
			if l.Hosts[i].RNICs[j].IP == ip {
				return &l.Hosts[i], &l.Hosts[i].RNICs[j], true
			}
		}
	}
	return nil, nil, false
}

// DeviceNames lists switches then hosts.
func (l *Lab) DeviceNames() []string {
	var out []string
	for _, s := range l.Switches {
		out = append(out, s.Name)
	}
	for _, h := range l.Hosts {
		out = append(out, h.Name)
	}
	return out
}

// CredentialFor returns the credential a device uses: its own reference, or
// the lab's "default" credential.
func (l *Lab) CredentialFor(device string) (Credential, bool) {
	ref := ""
	if s, ok := l.Switch(device); ok {
		ref = s.Credential
	} else if h, ok := l.Host(device); ok {
		ref = h.Credential
	} else {
		return Credential{}, false
	}
	if ref == "" {
		ref = "default"
	}
	c, ok := l.Credentials[ref]
	return c, ok
}

// PortSpeedGbps is the declared speed of a device port (a host's port is its
// RNIC device or netdev); 0 if unknown.
func (l *Lab) PortSpeedGbps(e LinkEnd) float64 {
	if s, ok := l.Switch(e.Device); ok {
		for _, p := range s.Ports {
			if p.Name == e.Port {
				return p.SpeedGbps
			}
		}
	}
	if h, ok := l.Host(e.Device); ok {
		for _, r := range h.RNICs {
			if r.Device == e.Port || r.Netdev == e.Port {
				return r.SpeedGbps
			}
		}
	}
	return 0
}

// LinkSpeedGbps is the slower end's declared speed; 0 if either is unknown.
func (l *Lab) LinkSpeedGbps(k Link) float64 {
	a, b := l.PortSpeedGbps(k.A), l.PortSpeedGbps(k.B)
	if a == 0 || b == 0 {
		return 0
	}
	return min(a, b)
}

// Leaves lists the leaf switches.
func (l *Lab) Leaves() []Switch { return l.byRole("leaf") }

// Spines lists the spine switches.
func (l *Lab) Spines() []Switch { return l.byRole("spine") }

func (l *Lab) byRole(role string) []Switch {
	var out []Switch
	for _, s := range l.Switches {
		if s.Role == role {
			out = append(out, s)
		}
	}
	return out
}

// PortNames are a switch's port names, in the lab's order.
func (s Switch) PortNames() []string {
	names := make([]string, len(s.Ports))
	for i, p := range s.Ports {
		names[i] = p.Name
	}
	return names
}
