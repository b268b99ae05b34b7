package inventory

import (
	"fmt"
	"regexp"
	"strconv"
)

var (
	leafspineSpec = regexp.MustCompile(`^leafspine:(\d+)x(\d+):(\d+)(?:@(\d+(?:\.\d+)?))?$`)
	fattreeSpec   = regexp.MustCompile(`^fattree:(\d+)(?:@(\d+(?:\.\d+)?))?$`)
)

// IsGeneratorSpec reports whether s names a generated topology.
func IsGeneratorSpec(s string) bool {
	return leafspineSpec.MatchString(s) || fattreeSpec.MatchString(s)
}

// Resolve returns the lab a name refers to: a generated topology, or a lab
// file that is loaded and validated.
func Resolve(nameOrPath string) (*Lab, error) { return ResolveWith(nameOrPath, nil) }

// ResolveWith is Resolve validating each switch's QoS driver against
// drivers (see ValidateWith).
func ResolveWith(nameOrPath string, drivers QoSDrivers) (*Lab, error) {
	return ResolveAgainst(nameOrPath, Registries{QoSDrivers: drivers})
}

// Generate builds an emulated lab from a spec:
//
//	leafspine:<spines>x<leaves>:<hosts-per-leaf>[@<gbps>]
//
// Every leaf has one link to every spine at the same speed as the hosts, so
// the leaves are oversubscribed hosts-per-leaf:spines. Hosts are h1..hN in
// leaf order with one RNIC (mlx5_0/ens1f0, GID index 3, 10.<leaf>.<i/250>.<i%250+1>).
func Generate(spec string) (*Lab, error) {
	if fattreeSpec.MatchString(spec) {
		return generateFatTree(spec)
	}
	m := leafspineSpec.FindStringSubmatch(spec)
	if m == nil {
		return nil, fmt.Errorf("topology %q: want leafspine:<spines>x<leaves>:<hosts-per-leaf>[@<gbps>] (e.g. leafspine:2x4:8@100) or fattree:<k>[@<gbps>] (e.g. fattree:4)", spec)
	}
	spines, _ := strconv.Atoi(m[1])
	leaves, _ := strconv.Atoi(m[2])
	perLeaf, _ := strconv.Atoi(m[3])
	gbps := 100.0
	if m[4] != "" {
		gbps, _ = strconv.ParseFloat(m[4], 64)
	}
	switch {
	case spines < 1 || leaves < 1 || perLeaf < 1:
		return nil, fmt.Errorf("topology %q: spines, leaves and hosts per leaf must be >= 1", spec)
	case leaves > 250 || perLeaf > 1000 || leaves*perLeaf > 4096 || spines > 256:
		return nil, fmt.Errorf("topology %q: too large (at most 4096 hosts, 250 leaves, 256 spines)", spec)
	case gbps <= 0:
		return nil, fmt.Errorf("topology %q: speed must be > 0", spec)
	}
	lab := &Lab{Name: spec, Emulated: true, Generator: spec}
	port := func(i int) string { return fmt.Sprintf("%d/0", i) }
	for s := 1; s <= spines; s++ {
		sw := Switch{Name: fmt.Sprintf("spine%d", s), Role: "spine", Model: "emulated-tofino", QoSDriver: "netconf"}
		for l := 1; l <= leaves; l++ {
			sw.Ports = append(sw.Ports, Port{Name: port(l), SpeedGbps: gbps})
		}
		lab.Switches = append(lab.Switches, sw)
	}
	n := 0
	for l := 1; l <= leaves; l++ {
		leaf := Switch{Name: fmt.Sprintf("leaf%d", l), Role: "leaf", Model: "emulated-tofino", QoSDriver: "netconf"}
		for i := 1; i <= perLeaf+spines; i++ {
			leaf.Ports = append(leaf.Ports, Port{Name: port(i), SpeedGbps: gbps})
		}
		for i := 0; i < perLeaf; i++ {
			n++
			h := Host{Name: fmt.Sprintf("h%d", n), RNICs: []RNIC{{
				Device: "mlx5_0", Netdev: "ens1f0", GIDIndex: 3, SpeedGbps: gbps,
				IP: fmt.Sprintf("10.%d.%d.%d", l, i/250, i%250+1),
			}}}
			lab.Hosts = append(lab.Hosts, h)
			lab.Links = append(lab.Links, Link{A: LinkEnd{leaf.Name, port(i + 1)}, B: LinkEnd{h.Name, "mlx5_0"}, DelayNs: 1000})
		}
		for s := 1; s <= spines; s++ {
			lab.Links = append(lab.Links, Link{A: LinkEnd{leaf.Name, port(perLeaf + s)}, B: LinkEnd{fmt.Sprintf("spine%d", s), port(l)}, DelayNs: 1000})
		}
		lab.Switches = append(lab.Switches, leaf)
	}
	return lab, nil
}

// generateFatTree builds a k-ary fat-tree: k pods of k/2 edge switches
// (role leaf, k/2 hosts each) and k/2 aggregation switches (role agg), and
// (k/2)^2 core switches (role spine); k^3/4 hosts, all links at one speed,
// non-blocking. Core switch j (0-based) connects to aggregation switch j/(k/2)
// of every pod.
func generateFatTree(spec string) (*Lab, error) {
	m := fattreeSpec.FindStringSubmatch(spec)
	k, _ := strconv.Atoi(m[1])
	gbps := 100.0
	if m[2] != "" {
		gbps, _ = strconv.ParseFloat(m[2], 64)
	}
	switch {
	case k < 2 || k%2 != 0:
		return nil, fmt.Errorf("topology %q: k must be even and >= 2", spec)
	case k*k*k/4 > 4096:
		return nil, fmt.Errorf("topology %q: too large (at most 4096 hosts)", spec)
	case gbps <= 0:
		return nil, fmt.Errorf("topology %q: speed must be > 0", spec)
	}
	h := k / 2
	lab := &Lab{Name: spec, Emulated: true, Generator: spec}
	port := func(i int) string { return fmt.Sprintf("%d/0", i) }
	sw := func(name, role string, ports int) Switch {
		s := Switch{Name: name, Role: role, Model: "emulated-tofino", QoSDriver: "netconf"}
		for i := 1; i <= ports; i++ {
			s.Ports = append(s.Ports, Port{Name: port(i), SpeedGbps: gbps})
		}
		return s
	}
	link := func(a, ap, b, bp string) {
		lab.Links = append(lab.Links, Link{A: LinkEnd{a, ap}, B: LinkEnd{b, bp}, DelayNs: 1000})
	}
	for c := 0; c < h*h; c++ {
		lab.Switches = append(lab.Switches, sw(fmt.Sprintf("core%d", c+1), "spine", k))
	}
	n := 0
	for p := 1; p <= k; p++ {
		for a := 0; a < h; a++ {
			agg := fmt.Sprintf("agg%d-%d", p, a+1)
			lab.Switches = append(lab.Switches, sw(agg, "agg", k))
			for j := 0; j < h; j++ { // uplinks to cores a*h .. a*h+h-1
				link(agg, port(h+j+1), fmt.Sprintf("core%d", a*h+j+1), port(p))
			}
		}
		for e := 0; e < h; e++ {
			edge := fmt.Sprintf("edge%d-%d", p, e+1)
			lab.Switches = append(lab.Switches, sw(edge, "leaf", k))
			for i := 0; i < h; i++ {
				n++
				host := Host{Name: fmt.Sprintf("h%d", n), RNICs: []RNIC{{Device: "mlx5_0", Netdev: "ens1f0", GIDIndex: 3, SpeedGbps: gbps,
					IP: fmt.Sprintf("10.%d.%d.%d", p, e, i+1)}}}
				lab.Hosts = append(lab.Hosts, host)
				link(edge, port(i+1), host.Name, "mlx5_0")
			}
			for a := 0; a < h; a++ {
				link(edge, port(h+a+1), fmt.Sprintf("agg%d-%d", p, a+1), port(e+1))
			}
		}
	}
	return lab, nil
}
