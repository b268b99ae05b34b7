package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/suggest"
)

var (
	leafspineSpec = regexp.MustCompile(`^leafspine:(\d+)x(\d+):(\d+)(?:@(\d+(?:\.\d+)?))?$`)
	fattreeSpec   = regexp.MustCompile(`^fattree:(\d+)(?:@(\d+(?:\.\d+)?))?$`)
)

// IsGeneratorSpec reports whether s names a generated topology (its
// options, after the first comma, are checked by Generate).
func IsGeneratorSpec(s string) bool {
	topo, _, _ := strings.Cut(s, ",")
	return leafspineSpec.MatchString(topo) || fattreeSpec.MatchString(topo)
}

// genOptions are a spec's options: ",delay=5us" after the topology.
type genOptions struct {
	delayNs int64 // every link's one-way propagation delay
}

// genOptionNames are the options a spec may give, for the error that
// names them.
var genOptionNames = []string{"delay"}

// maxGenDelay bounds a generated link's delay: a datacenter link's is
// microseconds; a second is a typo, not a fabric.
const maxGenDelay = time.Second

// parseGenOptions reads the comma-separated key=value options of spec
// after its topology.
func parseGenOptions(spec, opts string) (genOptions, error) {
	o := genOptions{delayNs: DefaultLinkDelayNs}
	if opts == "" {
		return o, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok || v == "":
			return o, fmt.Errorf("topology %q: option %q: want key=value (e.g. delay=5us)", spec, kv)
		case seen[k]:
			return o, fmt.Errorf("topology %q: option %s given twice", spec, k)
		}
		seen[k] = true
		switch k {
		case "delay":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Nanosecond || d > maxGenDelay {
				return o, fmt.Errorf("topology %q: delay %q: want a duration from 1ns to %v (e.g. 5us)", spec, v, maxGenDelay)
			}
			o.delayNs = d.Nanoseconds()
		default:
			return o, fmt.Errorf("topology %q: unknown option %q%s (known: %s)", spec, k, suggest.DidYouMean(k, genOptionNames, 3), strings.Join(genOptionNames, ", "))
		}
	}
	return o, nil
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
//	leafspine:<spines>x<leaves>:<hosts-per-leaf>[@<gbps>][,delay=<duration>]
//
// Every leaf has one link to every spine at the same speed as the hosts, so
// the leaves are oversubscribed hosts-per-leaf:spines. Hosts are h1..hN in
// leaf order with one RNIC (mlx5_0/ens1f0, GID index 3, 10.<leaf>.<i/250>.<i%250+1>).
// Every link's one-way delay is 1 us unless the spec's delay says
// otherwise (e.g. leafspine:10x10:30@40,delay=5us, FLB's ns-3 links).
func Generate(spec string) (*Lab, error) {
	topo, opts, _ := strings.Cut(spec, ",")
	o, err := parseGenOptions(spec, opts)
	if err != nil {
		return nil, err
	}
	if fattreeSpec.MatchString(topo) {
		return generateFatTree(spec, topo, o)
	}
	m := leafspineSpec.FindStringSubmatch(topo)
	if m == nil {
		return nil, fmt.Errorf("topology %q: want leafspine:<spines>x<leaves>:<hosts-per-leaf>[@<gbps>] (e.g. leafspine:2x4:8@100) or fattree:<k>[@<gbps>] (e.g. fattree:4), either with ,delay=<duration> for links other than 1 us", spec)
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
			lab.Links = append(lab.Links, Link{A: LinkEnd{leaf.Name, port(i + 1)}, B: LinkEnd{h.Name, "mlx5_0"}, DelayNs: o.delayNs})
		}
		for s := 1; s <= spines; s++ {
			lab.Links = append(lab.Links, Link{A: LinkEnd{leaf.Name, port(perLeaf + s)}, B: LinkEnd{fmt.Sprintf("spine%d", s), port(l)}, DelayNs: o.delayNs})
		}
		lab.Switches = append(lab.Switches, leaf)
	}
	return lab, nil
}

// generateFatTree builds a k-ary fat-tree: k pods of k/2 edge switches
// (role leaf, k/2 hosts each) and k/2 aggregation switches (role agg), and
// (k/2)^2 core switches (role spine); k^3/4 hosts, all links at one speed
// and delay, non-blocking. Core switch j (0-based) connects to aggregation
// switch j/(k/2) of every pod. topo is spec without its options.
func generateFatTree(spec, topo string, o genOptions) (*Lab, error) {
	m := fattreeSpec.FindStringSubmatch(topo)
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
		lab.Links = append(lab.Links, Link{A: LinkEnd{a, ap}, B: LinkEnd{b, bp}, DelayNs: o.delayNs})
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
