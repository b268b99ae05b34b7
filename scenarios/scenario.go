package scenarios

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/yamlpos"
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
	File      string    `yaml:"-" json:"file,omitempty"`
}

// Telemetry says what to stream from the switches and how often.
type Telemetry struct {
	Interval string   `yaml:"interval,omitempty" json:"interval,omitempty"` // e.g. 100us, 1s
	Paths    []string `yaml:"paths,omitempty" json:"paths,omitempty"`
	Disabled bool     `yaml:"disabled,omitempty" json:"disabled,omitempty"`
}

// Emulation selects the fabric twin's engine and its switches' and RNICs'
// behaviour for an emulated lab.
type Emulation struct {
	Engine    string            `yaml:"engine,omitempty" json:"engine,omitempty"`       // flow | packet
	LB        string            `yaml:"lb,omitempty" json:"lb,omitempty"`               // ecmp | letflow | drill
	LBParams  map[string]string `yaml:"lb_params,omitempty" json:"lb_params,omitempty"` // e.g. timeout_us
	Transport string            `yaml:"transport,omitempty" json:"transport,omitempty"` // gbn | irn
}

// Provision names profile files (relative to the scenario file).
type Provision struct {
	SwitchProfile string `yaml:"switch_profile,omitempty" json:"switch_profile,omitempty"`
	RNICProfile   string `yaml:"rnic_profile,omitempty" json:"rnic_profile,omitempty"`
	// Atomic rolls every switch back if one fails to take the profile.
	Atomic bool `yaml:"atomic,omitempty" json:"atomic,omitempty"`
}

// Traffic is one pattern instance; every field not used by its pattern
// must be left out.
type Traffic struct {
	Name    string `yaml:"name,omitempty" json:"name,omitempty"`
	Pattern string `yaml:"pattern" json:"pattern"` // incast | allreduce
	Tool    string `yaml:"tool,omitempty" json:"tool,omitempty"`
	MsgSize string `yaml:"msg_size,omitempty" json:"msg_size,omitempty"`
	QPs     int    `yaml:"qps,omitempty" json:"qps,omitempty"`
	// incast
	Senders  int    `yaml:"senders,omitempty" json:"senders,omitempty"`
	Receiver string `yaml:"receiver,omitempty" json:"receiver,omitempty"`
	Bytes    string `yaml:"bytes,omitempty" json:"bytes,omitempty"`
	// allreduce (and workload: how many hosts take part; default all)
	Hosts  int    `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	Buffer string `yaml:"buffer,omitempty" json:"buffer,omitempty"`
	// workload: sizes from a CDF (shipped name or file), Poisson arrivals
	// at Load (fraction of each host's link rate) for Duration, seeded.
	CDF      string  `yaml:"cdf,omitempty" json:"cdf,omitempty"`
	Load     float64 `yaml:"load,omitempty" json:"load,omitempty"`
	Duration string  `yaml:"duration,omitempty" json:"duration,omitempty"`
	Seed     int64   `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Explicit host names (either pattern); default: the lab's hosts in order.
	HostList []string `yaml:"host_list,omitempty" json:"host_list,omitempty"`
}

// Patterns.
const (
	PatternIncast    = "incast"
	PatternAllReduce = "allreduce"
	PatternWorkload  = "workload"
)

//go:embed *.yaml
var library embed.FS

// Builtin lists the scenarios that ship with labctl.
func Builtin() []string {
	ents, _ := library.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// Load reads a scenario from a file path or a built-in name ("incast").
func Load(nameOrPath string) (*Scenario, error) {
	data, err := os.ReadFile(nameOrPath)
	file := nameOrPath
	if err != nil {
		if !os.IsNotExist(err) || strings.ContainsAny(nameOrPath, `/\`) {
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
		dir := filepath.Dir(s.File)
		for _, p := range []*string{&s.Provision.SwitchProfile, &s.Provision.RNICProfile} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	} else {
		s.File = file
	}
	return s, nil
}

// Parse decodes and validates a scenario; errors carry file:line: field.
func Parse(data []byte, file string) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ix := yamlpos.New(file, &root)
	if err := s.validate(ix); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Scenario) validate(ix *yamlpos.Index) error {
	var ps yamlpos.Problems
	if s.Name == "" {
		ix.Add(&ps, "name", "a scenario needs a name")
	}
	if s.Repetitions < 0 {
		ix.Add(&ps, "repetitions", "must be >= 1 (or left out for 1)")
	}
	if s.Telemetry.Interval != "" {
		if d, err := time.ParseDuration(s.Telemetry.Interval); err != nil || d <= 0 {
			ix.Add(&ps, "telemetry.interval", "bad duration %q (e.g. 100us, 1s)", s.Telemetry.Interval)
		}
	}
	if len(s.Traffic) == 0 {
		ix.Add(&ps, "traffic", "at least one traffic pattern is needed")
	}
	switch s.Emulation.Engine {
	case "", "flow", "packet":
	default:
		ix.Add(&ps, "emulation.engine", "unknown engine %q (flow or packet)", s.Emulation.Engine)
	}
	switch s.Emulation.Transport {
	case "", "gbn", "irn":
	default:
		ix.Add(&ps, "emulation.transport", "unknown transport %q (gbn or irn)", s.Emulation.Transport)
	}
	if (s.Emulation.LB != "" || s.Emulation.Transport != "") && s.Emulation.Engine == "flow" {
		ix.Add(&ps, "emulation", "lb and transport need the packet engine (engine: packet, the default)")
	}
	names := map[string]bool{}
	for i, t := range s.Traffic {
		p := fmt.Sprintf("traffic[%d]", i)
		if n := t.PointName(i); names[n] {
			ix.Add(&ps, p+".name", "duplicate traffic name %q", n)
		} else {
			names[n] = true
		}
		checkSize := func(field, v string, required bool) {
			if v == "" {
				if required {
					ix.Add(&ps, p+"."+field, "required for pattern %s", t.Pattern)
				}
				return
			}
			if n, err := ParseBytes(v); err != nil || n <= 0 {
				ix.Add(&ps, p+"."+field, "bad size %q (e.g. 4096, 64KiB, 1MiB)", v)
			}
		}
		checkSize("msg_size", t.MsgSize, false)
		if t.QPs < 0 || t.QPs > 16384 {
			ix.Add(&ps, p+".qps", "must be between 1 and 16384")
		}
		switch t.Tool {
		case "", "ib_write_bw", "ib_read_bw", "ib_send_bw":
		default:
			ix.Add(&ps, p+".tool", "unknown tool %q (ib_write_bw, ib_read_bw, ib_send_bw)", t.Tool)
		}
		switch t.Pattern {
		case PatternIncast:
			checkSize("bytes", t.Bytes, true)
			if t.Senders < 1 && len(t.HostList) == 0 {
				ix.Add(&ps, p+".senders", "an incast needs senders >= 1 (or host_list)")
			}
			if t.Hosts != 0 || t.Buffer != "" {
				ix.Add(&ps, p, "hosts and buffer belong to allreduce, not incast")
			}
		case PatternAllReduce:
			checkSize("buffer", t.Buffer, true)
			if t.Hosts < 2 && len(t.HostList) < 2 {
				ix.Add(&ps, p+".hosts", "an all-reduce ring needs hosts >= 2")
			}
			if t.Senders != 0 || t.Bytes != "" || t.Receiver != "" {
				ix.Add(&ps, p, "senders, receiver and bytes belong to incast, not allreduce")
			}
		case PatternWorkload:
			if t.CDF == "" {
				ix.Add(&ps, p+".cdf", "required: a shipped distribution (e.g. websearch, alistorage2019) or a CDF file")
			}
			if t.Load <= 0 || t.Load > 1 {
				ix.Add(&ps, p+".load", "must be in (0, 1]: the fraction of each host's link rate")
			}
			if d, err := time.ParseDuration(t.Duration); err != nil || d <= 0 {
				ix.Add(&ps, p+".duration", "bad duration %q (e.g. 2ms)", t.Duration)
			}
			if t.Senders != 0 || t.Bytes != "" || t.Receiver != "" || t.Buffer != "" {
				ix.Add(&ps, p, "senders, receiver, bytes and buffer do not apply to workload")
			}
		case "":
			ix.Add(&ps, p+".pattern", "required (incast, allreduce or workload)")
		default:
			ix.Add(&ps, p+".pattern", "unknown pattern %q (incast, allreduce or workload)", t.Pattern)
		}
	}
	return ps.Err()
}

// PointName is the traffic entry's name, defaulting to pattern-index.
func (t Traffic) PointName(i int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("%s-%d", t.Pattern, i)
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
