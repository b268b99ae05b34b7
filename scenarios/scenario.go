package scenarios

import (
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/perftest"
)

// DefaultLab is the emulated leaf-spine a scenario runs on when it names no
// lab: 2 spines, 4 leaves, 8 hosts per leaf at 100 Gb/s (32 hosts, 2:1
// oversubscribed at the leaves), enough for the shipped scenarios.
const DefaultLab = "leafspine:2x4:8@100"

// Scenario is what to run: abstract needs (hosts, traffic, telemetry), bound
// to a lab at run time.
type Scenario struct {
	Name        string    `yaml:"name" json:"name"`
	Description string    `yaml:"description,omitempty" json:"description,omitempty"`
	Lab         string    `yaml:"lab,omitempty" json:"lab,omitempty"`
	Repetitions int       `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	Telemetry   Telemetry `yaml:"telemetry,omitempty" json:"telemetry"`
	// Emulation tunes the fabric twin when the lab is emulated; a hardware
	// lab ignores it.
	Emulation Emulation `yaml:"emulation,omitempty" json:"emulation,omitempty"`
	// Provision names the profiles the lab must match before traffic.
	Provision Provision `yaml:"provision,omitempty" json:"provision,omitempty"`
	Traffic   []Traffic `yaml:"traffic" json:"traffic"`
	// Matrix sweeps fields: the scenario runs once per combination of
	// their values (the cross product, first sweep outermost).
	Matrix []Sweep `yaml:"matrix,omitempty" json:"matrix,omitempty"`
	File   string  `yaml:"-" json:"file,omitempty"`

	ix *yamlpos.Index // where each field was written, for variants' errors
}

// Telemetry says what to stream from the switches and how often.
type Telemetry struct {
	Interval string `yaml:"interval,omitempty" json:"interval,omitempty"` // e.g. 100us, 1s
	// RNICInterval is how often the hosts' RNIC counters (hw_counters,
	// ethtool -S) are read over SSH while a point's traffic runs, besides
	// the reads before and after it (default: 1s on hardware, none on an
	// emulated lab; see Scenario.RNICInterval).
	RNICInterval string   `yaml:"rnic_interval,omitempty" json:"rnic_interval,omitempty"`
	Paths        []string `yaml:"paths,omitempty" json:"paths,omitempty"`
	Disabled     bool     `yaml:"disabled,omitempty" json:"disabled,omitempty"`
}

// Emulation selects the fabric twin's engine and its switches' and RNICs'
// behaviour for an emulated lab.
type Emulation struct {
	Engine    string            `yaml:"engine,omitempty" json:"engine,omitempty"`       // flow | packet
	LB        string            `yaml:"lb,omitempty" json:"lb,omitempty"`               // ecmp | letflow | drill
	LBParams  map[string]string `yaml:"lb_params,omitempty" json:"lb_params,omitempty"` // e.g. timeout_us
	Transport string            `yaml:"transport,omitempty" json:"transport,omitempty"` // gbn | irn
	// HostLB is the host module every emulated RNIC runs (e.g. hf2t),
	// with its parameters; an RNIC profile's host_lb sets it when the
	// emulation names none (Variants).
	HostLB       string            `yaml:"host_lb,omitempty" json:"host_lb,omitempty"`
	HostLBParams map[string]string `yaml:"host_lb_params,omitempty" json:"host_lb_params,omitempty"`
	// RNIC changes the emulated RNICs' profile for this variant (DCQCN on
	// or off) without a profile file (rnicoverride.go).
	RNIC  *RNICOverride `yaml:"rnic,omitempty" json:"rnic,omitempty"`
	Knobs `yaml:",inline"`
}

// Knobs are the packet engine's conventions that no device has a setting
// for, with the papers' simulators' values as defaults (docs/fabric-twin.md,
// "Measurement conventions"); unset, each keeps its default.
type Knobs struct {
	// NackIntervalUs: a go-back-N receiver NACKs the PSN it expects again
	// this often while out-of-order packets keep coming (default 4); 0
	// NACKs each expected PSN once and leaves the rest to the sender's
	// timeout.
	NackIntervalUs *float64 `yaml:"nack_interval_us,omitempty" json:"nack_interval_us,omitempty"`
	// CNPOnNack: a NACK comes with a CNP (default true, as ns-3's does).
	CNPOnNack *bool `yaml:"cnp_on_nack,omitempty" json:"cnp_on_nack,omitempty"`
	// PFCPauseQuanta is the pause time PAUSE frames carry, in quanta of
	// 512 bit times (1 to 65535; default 65535, what switches send), and
	// PFCRefreshUs how often a switch in XOFF sends PAUSE again (default
	// half the pause time).
	PFCPauseQuanta int     `yaml:"pfc_pause_quanta,omitempty" json:"pfc_pause_quanta,omitempty"`
	PFCRefreshUs   float64 `yaml:"pfc_refresh_us,omitempty" json:"pfc_refresh_us,omitempty"`
	// ReorderQueues is how many reorder queues each switch port offers the
	// schemes that reorder at the destination ToR (ConWeave, SELB, Gemma):
	// default 8, 0 for as many as they ask (SELB's ConWeave-l against
	// ConWeave-n).
	ReorderQueues *int `yaml:"reorder_queues,omitempty" json:"reorder_queues,omitempty"`
}

// Any reports whether any knob is set.
func (k Knobs) Any() bool { return k != Knobs{} }

// Provision names the image and profile files (relative to the scenario
// file) the lab must match before traffic.
type Provision struct {
	// Image is a switch image bundle (directory or .tar.gz); it is pushed
	// and activated on every switch before the profiles are applied.
	Image         string `yaml:"image,omitempty" json:"image,omitempty"`
	SwitchProfile string `yaml:"switch_profile,omitempty" json:"switch_profile,omitempty"`
	RNICProfile   string `yaml:"rnic_profile,omitempty" json:"rnic_profile,omitempty"`
	// Atomic rolls every switch back if one fails to take the profile.
	Atomic bool `yaml:"atomic,omitempty" json:"atomic,omitempty"`
}

// Any says whether anything is to be provisioned.
func (p Provision) Any() bool { return p.Image != "" || p.SwitchProfile != "" || p.RNICProfile != "" }

// Traffic is one pattern instance. Which fields a pattern takes is in its
// registry entry (patterns.go); every other field must be left out.
type Traffic struct {
	Name    string `yaml:"name,omitempty" json:"name,omitempty"`
	Pattern string `yaml:"pattern" json:"pattern"`
	Tool    string `yaml:"tool,omitempty" json:"tool,omitempty"`
	MsgSize string `yaml:"msg_size,omitempty" json:"msg_size,omitempty"`
	QPs     int    `yaml:"qps,omitempty" json:"qps,omitempty"`
	// Explicit host names; default: the lab's hosts in order.
	HostList []string `yaml:"host_list,omitempty" json:"host_list,omitempty"`
	// incast, burst
	Senders  int    `yaml:"senders,omitempty" json:"senders,omitempty"`
	Receiver string `yaml:"receiver,omitempty" json:"receiver,omitempty"`
	// incast: how senders are picked without host_list: "" the lab's
	// hosts in order, "leaves" round robin over the leaves (FLB's
	// servers "under randomly selected leaf switches").
	Spread string `yaml:"spread,omitempty" json:"spread,omitempty"`
	// incast, permutation, burst: bytes per flow
	Bytes string `yaml:"bytes,omitempty" json:"bytes,omitempty"`
	// allreduce, workload, permutation: how many hosts take part
	Hosts  int    `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	Buffer string `yaml:"buffer,omitempty" json:"buffer,omitempty"`
	// allreduce: only the first Steps steps (0: all 2(N-1))
	Steps int `yaml:"steps,omitempty" json:"steps,omitempty"`
	// workload, permutation: flow sizes from a CDF (a shipped name or a
	// file, relative to the scenario file)
	CDF string `yaml:"cdf,omitempty" json:"cdf,omitempty"`
	// workload: Poisson arrivals at Load (fraction of each host's link
	// rate) within Duration, destinations by Pairing and IntraRack.
	Load float64 `yaml:"load,omitempty" json:"load,omitempty"`
	// LoadBasis says what Load is a fraction of: "host" (each host's link,
	// the default) or "network" (the fabric's capacity, as the papers'
	// simulators state it: each host offers Load / the lab's
	// oversubscription of its link).
	LoadBasis string   `yaml:"load_basis,omitempty" json:"load_basis,omitempty"`
	Duration  string   `yaml:"duration,omitempty" json:"duration,omitempty"`
	Pairing   string   `yaml:"pairing,omitempty" json:"pairing,omitempty"`
	IntraRack *float64 `yaml:"intra_rack,omitempty" json:"intra_rack,omitempty"`
	// Seed pins the random draw (workload, permutation); unset, every
	// repetition gets its own (see seedFor).
	Seed *int64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// burst: Background long flows of BackgroundBytes, then Bursts bursts
	// Interval apart from Start.
	Background      int    `yaml:"background,omitempty" json:"background,omitempty"`
	BackgroundBytes string `yaml:"background_bytes,omitempty" json:"background_bytes,omitempty"`
	Bursts          int    `yaml:"bursts,omitempty" json:"bursts,omitempty"`
	Interval        string `yaml:"interval,omitempty" json:"interval,omitempty"`
	Start           string `yaml:"start,omitempty" json:"start,omitempty"`
}

//go:embed *.yaml papers/*.yaml
var library embed.FS

// Builtin lists the scenarios that ship with labctl: the library's, and
// the papers' experiments as papers/NAME.
func Builtin() []string {
	var out []string
	for _, dir := range []string{".", "papers"} {
		ents, _ := library.ReadDir(dir)
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
				out = append(out, path.Join(dir, name))
			}
		}
	}
	return out
}

// Load reads a scenario from a file path or a built-in name ("incast").
func Load(nameOrPath string) (*Scenario, error) {
	data, err := os.ReadFile(nameOrPath)
	file := nameOrPath
	if err != nil {
		builtin := slices.Contains(Builtin(), strings.TrimSuffix(nameOrPath, ".yaml"))
		if !os.IsNotExist(err) || !builtin && strings.ContainsAny(nameOrPath, `/\`) {
			return nil, fmt.Errorf("scenario %s: %w", nameOrPath, err)
		}
		b, lerr := library.ReadFile(strings.TrimSuffix(nameOrPath, ".yaml") + ".yaml")
		if lerr != nil {
			return nil, fmt.Errorf("scenario %q: no such file and no built-in scenario of that name (built-in: %s)",
				nameOrPath, strings.Join(Builtin(), ", "))
		}
		data, file = b, "builtin:"+nameOrPath
	}
	s, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(file, "builtin:") {
		s.File, _ = filepath.Abs(file)
	}
	return s, nil
}

// cdf loads a traffic entry's flow-size distribution: a shipped one by
// name, else a file relative to the scenario.
func (s *Scenario) cdf(name string) (*perftest.CDF, error) {
	if slices.Contains(perftest.ShippedCDFs(), name) {
		return perftest.CDFByName(name)
	}
	return perftest.CDFByName(s.resolve(name))
}

// resolve makes a file named in the scenario (a profile, a CDF) relative
// to the scenario file; absolute paths and built-in scenarios' names stay.
func (s *Scenario) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || s.File == "" || strings.HasPrefix(s.File, "builtin:") {
		return p
	}
	return filepath.Join(filepath.Dir(s.File), p)
}

// Parse decodes and validates a scenario; errors carry file:line: field.
func Parse(data []byte, file string) (*Scenario, error) {
	s := Scenario{File: file}
	ix, err := yamlpos.Decode(data, file, &s)
	if err != nil {
		return nil, err
	}
	s.ix = ix
	if len(s.Matrix) == 0 {
		if err := s.validate(s.ix).Err(); err != nil {
			return nil, err
		}
		return &s, nil
	}
	if _, err := s.Variants(); err != nil { // validates every variant
		return nil, err
	}
	return &s, nil
}

// validate checks s and returns what is wrong, placed by ix.
func (s *Scenario) validate(ix *yamlpos.Index) yamlpos.Problems {
	var ps yamlpos.Problems
	if s.Name == "" {
		ix.Add(&ps, "name", "a scenario needs a name")
	} else if bad := runNameProblem("a scenario name names the run's directory", s.Name); bad != "" {
		ix.Add(&ps, "name", "%s", bad)
	}
	if s.Repetitions < 0 {
		ix.Add(&ps, "repetitions", "must be >= 1 (or left out for 1)")
	}
	if s.Telemetry.Interval != "" {
		if d, err := time.ParseDuration(s.Telemetry.Interval); err != nil || d <= 0 {
			ix.Add(&ps, "telemetry.interval", "bad duration %q (e.g. 100us, 1s)", s.Telemetry.Interval)
		}
	}
	if v := s.Telemetry.RNICInterval; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < minRNICInterval {
			ix.Add(&ps, "telemetry.rnic_interval", "bad duration %q (at least %v: each read is an SSH command per RNIC)", v, minRNICInterval)
		}
	}
	if len(s.Traffic) == 0 {
		ix.Add(&ps, "traffic", "at least one traffic pattern is needed")
	}
	// emulation.engine's name is the twin's registry's to check (Runner.Engines)
	switch s.Emulation.Transport {
	case "", "gbn", "irn":
	default:
		ix.Add(&ps, "emulation.transport", "unknown transport %q (gbn or irn)", s.Emulation.Transport)
	}
	if (s.Emulation.LB != "" || s.Emulation.Transport != "" || s.Emulation.Knobs.Any()) && s.Emulation.Engine == "flow" {
		ix.Add(&ps, "emulation", "lb, transport and the packet engine's knobs need the packet engine (engine: packet, the default)")
	}
	if s.Emulation.HostLB != "" && s.Emulation.Engine == "flow" {
		ix.Add(&ps, "emulation.host_lb", "host modules need the packet engine (engine: packet, the default): the flow engine models no RNIC")
	}
	if len(s.Emulation.HostLBParams) > 0 && s.Emulation.HostLB == "" {
		ix.Add(&ps, "emulation.host_lb_params", "parameters without host_lb: name the host module they are for")
	}
	s.Emulation.Knobs.check(ix, &ps)
	s.Emulation.RNIC.check(ix, &ps, s.Emulation.Engine)
	names := map[string]bool{}
	for i, t := range s.Traffic {
		p := fmt.Sprintf("traffic[%d]", i)
		if n := t.PointName(i); names[n] {
			ix.Add(&ps, p+".name", "duplicate traffic name %q", n)
		} else if bad := runNameProblem("a traffic name names files of the run and of hosts", n); bad != "" {
			ix.Add(&ps, p+".name", "%s", bad)
		} else {
			names[n] = true
		}
		checkTraffic(&checker{ix: ix, ps: &ps, path: p, s: s}, t)
	}
	return ps
}

// PointName is the traffic entry's name, defaulting to pattern-index.
func (t Traffic) PointName(i int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("%s-%d", t.Pattern, i)
}

// minRNICInterval bounds how often hosts are polled: each read is two
// SSH commands per RNIC.
const minRNICInterval = 10 * time.Millisecond

// RNICInterval is how often RNIC counters are polled during traffic: as
// asked, else every second on hardware and not at all on an emulated lab
// (0). There the counters move only when the twin has simulated a point,
// so a read during the traffic waits for the simulation and returns what
// the read after it does: polls added SSH sessions (two per host a round,
// on the cores the twin simulates on) and no figures. A scenario that
// sets rnic_interval is polled on either, which exercises the path.
func (s *Scenario) RNICInterval(emulated bool) time.Duration {
	if d, err := time.ParseDuration(s.Telemetry.RNICInterval); err == nil && d >= minRNICInterval {
		return d
	}
	if emulated {
		return 0
	}
	return time.Second
}

// Interval is the telemetry sample interval (default 100us on an emulated
// lab, where sim time is short, and 1s on hardware).
func (s *Scenario) Interval(emulated bool) time.Duration {
	if d, err := time.ParseDuration(s.Telemetry.Interval); err == nil && d > 0 {
		return d
	}
	if emulated {
		return 100 * time.Microsecond
	}
	return time.Second
}

func (k Knobs) check(ix *yamlpos.Index, ps *yamlpos.Problems) {
	if v := k.NackIntervalUs; v != nil && (!finite(*v) || *v < 0) {
		ix.Add(ps, "emulation.nack_interval_us", "must be >= 0 (0: one NACK per expected PSN)")
	}
	if k.PFCPauseQuanta < 0 || k.PFCPauseQuanta > 0xFFFF {
		ix.Add(ps, "emulation.pfc_pause_quanta", "must be between 1 and 65535 (quanta of 512 bit times)")
	}
	if !finite(k.PFCRefreshUs) || k.PFCRefreshUs < 0 {
		ix.Add(ps, "emulation.pfc_refresh_us", "must be > 0 (or left out for half the pause time)")
	}
	if v := k.ReorderQueues; v != nil && *v < 0 {
		ix.Add(ps, "emulation.reorder_queues", "must be >= 0 (0: as many as the schemes ask)")
	}
}
