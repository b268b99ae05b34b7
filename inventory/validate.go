package inventory

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
)

// MaxGIDIndex is the largest GID index perftest accepts for -x
// (hardware-surfaces 1: "Gid index should be between 0 and 64"); an RNIC
// whose RoCE GID sits past it cannot be measured with perftest anyway.
const MaxGIDIndex = 64

// Validate reports every problem in the lab, each with file:line: field.
// A switch's qos_driver and os are checked only by ValidateWith, which
// is given the registry of drivers.
func (l *Lab) Validate() error { return l.ValidateWith(nil) }

// QoSDrivers is what validation asks of the switch QoS driver registry
// (drivers/qosdriver): the driver a switch's qos_driver, os and model
// pick, or an error naming the known ones. An error with a Field()
// method is reported at that field of the switch.
type QoSDrivers interface {
	Pick(qosDriver, os, model string) (string, error)
}

// ValidateWith is Validate that also checks each switch's QoS driver
// against drivers (nil: not checked); ValidateAgainst checks every name.
func (l *Lab) ValidateWith(drivers QoSDrivers) error {
	return l.validate(Registries{QoSDrivers: drivers})
}

func (l *Lab) validate(r Registries) error {
	drivers := r.QoSDrivers
	var ps Problems
	add := func(path, format string, args ...any) { l.pos.Add(&ps, path, format, args...) }
	safe := func(path, problem string) {
		if problem != "" {
			add(path, "%s", problem)
		}
	}
	safe("known_hosts", badPath(l.KnownHosts))
	if l.Name == "" {
		add("name", "a lab needs a name")
	}
	for name, c := range l.Credentials {
		p := "credentials." + name
		if c.User == "" {
			add(p+".user", "user is required")
		}
		safe(p+".user", userName.check(c.User))
		safe(p+".password_env", envName.check(c.PasswordEnv))
		safe(p+".key_file", badPath(c.KeyFile))
		safe(p+".password_file", badPath(c.PasswordFile))
		if c.KeyFile == "" && !c.Agent && c.PasswordEnv == "" && c.PasswordFile == "" {
			add(p, "no method: set key_file, agent, password_env or password_file")
		}
	}
	// devices: switches and hosts share one namespace
	seen := map[string]string{}
	ports := map[string]map[string]bool{} // device -> port names (RNIC device and netdev for hosts)
	checkName := func(path, name string) {
		if name == "" {
			add(path+".name", "name is required")
		} else if bad := deviceName.check(name); bad != "" {
			add(path+".name", "%s", bad)
		} else if prev, dup := seen[name]; dup {
			add(path+".name", "duplicate device name %q (also %s)", name, prev)
		} else {
			seen[name] = path
		}
	}
	checkCred := func(path, ref string) {
		if ref != "" {
			if _, ok := l.Credentials[ref]; !ok {
				add(path+".credential", "credential %q is not defined under credentials", ref)
			}
		} else if !l.Emulated {
			if _, ok := l.Credentials["default"]; !ok {
				add(path+".credential", "no credential (name one, or define credentials.default)")
			}
		}
	}
	checkAddr := func(path, addr string, required bool) {
		if addr == "" {
			if required && !l.Emulated {
				add(path, "management endpoint host:port is required")
			}
			return
		}
		if _, p, err := net.SplitHostPort(addr); err != nil {
			add(path, "bad endpoint %q: want host:port", addr)
		} else if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			add(path, "bad port in %q", addr)
		}
	}
	for i, s := range l.Switches {
		p := fmt.Sprintf("switches[%d]", i)
		checkName(p, s.Name)
		switch s.Role {
		case "leaf", "spine", "agg":
		default:
			add(p+".role", "role %q: want leaf, agg or spine", s.Role)
		}
		safe(p+".os", osName.check(s.OS))
		safe(p+".model", osName.check(s.Model))
		if drivers != nil {
			if _, err := drivers.Pick(s.QoSDriver, s.OS, s.Model); err != nil {
				add(p+"."+fieldOf(err, "qos_driver"), "%v", err)
			}
		}
		checkCred(p, s.Credential)
		checkAddr(p+".mgmt.ssh", s.Mgmt.SSH, true)
		checkAddr(p+".mgmt.gnmi", s.Mgmt.GNMI, true)
		checkAddr(p+".mgmt.netconf", s.Mgmt.NETCONF, false)
		pm := map[string]bool{}
		for j, port := range s.Ports {
			pp := fmt.Sprintf("%s.ports[%d]", p, j)
			if port.Name == "" {
				add(pp+".name", "port name is required")
			} else if pm[port.Name] {
				add(pp+".name", "duplicate port %q on %s", port.Name, s.Name)
			}
			safe(pp+".name", portName.check(port.Name))
			pm[port.Name] = true
			// A port may leave its speed out (unknown); one that gives it
			// gives a positive number (NaN and .inf pass a < 0 check).
			if port.SpeedGbps < 0 || !finite(port.SpeedGbps) || port.SpeedGbps == 0 && l.pos.Has(pp+".speed_gbps") {
				add(pp+".speed_gbps", "speed must be positive")
			}
		}
		ports[s.Name] = pm
	}
	ips := map[string]string{}
	for i, h := range l.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		checkName(p, h.Name)
		checkCred(p, h.Credential)
		checkAddr(p+".mgmt.ssh", h.Mgmt.SSH, true)
		pm := map[string]bool{}
		if len(h.RNICs) == 0 {
			add(p+".rnics", "a host needs at least one RNIC")
		}
		for j, r := range h.RNICs {
			rp := fmt.Sprintf("%s.rnics[%d]", p, j)
			if r.Device == "" {
				add(rp+".device", "RNIC device (e.g. mlx5_0) is required")
			} else if pm[r.Device] {
				add(rp+".device", "duplicate RNIC %q on %s", r.Device, h.Name)
			}
			if r.Netdev == "" {
				add(rp+".netdev", "netdev (e.g. ens1f0) is required")
			}
			safe(rp+".device", ifName.check(r.Device))
			safe(rp+".netdev", ifName.check(r.Netdev))
			pm[r.Device], pm[r.Netdev] = true, true
			if r.SpeedGbps <= 0 || !finite(r.SpeedGbps) {
				add(rp+".speed_gbps", "speed must be > 0")
			}
			if r.GIDIndex < 0 || r.GIDIndex > MaxGIDIndex {
				add(rp+".gid_index", "gid_index %d is not 0..%d (what perftest's -x takes)", r.GIDIndex, MaxGIDIndex)
			}
			if net.ParseIP(r.IP) == nil {
				add(rp+".ip", "bad IP %q", r.IP)
			} else if prev, dup := ips[r.IP]; dup {
				add(rp+".ip", "IP %s is also used by %s", r.IP, prev)
			} else {
				ips[r.IP] = h.Name + "/" + r.Device
			}
		}
		if _, dup := ports[h.Name]; !dup { // a duplicate name keeps the first device's ports
			ports[h.Name] = pm
		}
	}
	used := map[string]string{}
	for i, lk := range l.Links {
		p := fmt.Sprintf("links[%d]", i)
		for _, e := range []struct {
			field string
			end   LinkEnd
		}{{"a", lk.A}, {"b", lk.B}} {
			pm, ok := ports[e.end.Device]
			switch {
			case !ok:
				add(p+"."+e.field, "unknown device %q", e.end.Device)
			case !pm[e.end.Port]:
				add(p+"."+e.field, "%s has no port or RNIC %q", e.end.Device, e.end.Port)
			default:
				key := e.end.Device + ":" + l.canonicalPort(e.end)
				if prev, dup := used[key]; dup {
					add(p+"."+e.field, "port %s is already cabled by %s", e.end, prev)
				}
				used[key] = p
			}
		}
		if lk.A.Device != "" && lk.A.Device == lk.B.Device {
			add(p, "a link cannot connect %s to itself", lk.A.Device)
		}
		if lk.DelayNs < 0 {
			add(p+".delay_ns", "delay must be >= 0")
		}
	}
	if in := l.Services.InfluxDB; in != nil {
		if u, err := url.Parse(in.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("services.influxdb.url", "want an http(s) URL, got %q", in.URL)
		}
		if in.Bucket == "" {
			add("services.influxdb.bucket", "bucket is required")
		}
		safe("services.influxdb.token_env", envName.check(in.TokenEnv))
		safe("services.influxdb.token_file", badPath(in.TokenFile))
	}
	l.validateGNMITLS(add)
	l.validateEmulation(r, add)
	return ps.Err()
}

// SwitchQoSDriver is the driver drivers picks for sw, or an error at
// sw's file:line and field.
func (l *Lab) SwitchQoSDriver(sw *Switch, drivers QoSDrivers) (string, error) {
	name, err := drivers.Pick(sw.QoSDriver, sw.OS, sw.Model)
	if err == nil {
		return name, nil
	}
	path := "switches"
	for i := range l.Switches {
		if l.Switches[i].Name == sw.Name {
			path = fmt.Sprintf("switches[%d]", i)
		}
	}
	var ps Problems
	l.pos.Add(&ps, path+"."+fieldOf(err, "qos_driver"), "device %s: %v", sw.Name, err)
	return "", ps.Err()
}

// fieldOf is the field err names, else def.
func fieldOf(err error, def string) string {
	var f interface{ Field() string }
	if errors.As(err, &f) && f.Field() != "" {
		return f.Field()
	}
	return def
}

// canonicalPort names a host RNIC by its device even if the link used the netdev.
func (l *Lab) canonicalPort(e LinkEnd) string {
	if h, ok := l.Host(e.Device); ok {
		for _, r := range h.RNICs {
			if r.Netdev == e.Port {
				return r.Device
			}
		}
	}
	return e.Port
}

// finite is false for NaN and the infinities (YAML's .nan and .inf), which
// every comparison lets through.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
