package provision

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/internal/yamlpos"
)

// QoSProfile is the intended switch QoS (the switch profile YAML). Keys
// left out are not managed, except the PFC priorities and thresholds: a
// profile always says which priorities are lossless and how they pause.
// An ECN queue, a DSCP code point or a pool given as `off` is removed
// from the switches; entries a profile does not name stay as they are
// (a plan notes them).
type QoSProfile struct {
	// PFCPriorities are the lossless priorities: PFC on, no drop.
	PFCPriorities []int `yaml:"pfc_priorities"`
	// Static PFC thresholds ...
	XoffBytes int64 `yaml:"xoff_bytes"`
	XonBytes  int64 `yaml:"xon_bytes"`
	// ... or a dynamic one (one of switchqos.Alphas).
	PFCAlpha      float64                   `yaml:"pfc_alpha"`
	HeadroomBytes int64                     `yaml:"headroom_bytes"`
	BufferPools   map[string]OrOff[int64]   `yaml:"buffer_pools"` // lossless, lossy
	ECN           map[int]OrOff[ECNProfile] `yaml:"ecn"`          // by queue
	DSCPToTC      map[int]OrOff[int]        `yaml:"dscp_to_tc"`
	Scheduler     string                    `yaml:"scheduler"` // strict | dwrr
	DWRRWeights   map[int]int               `yaml:"dwrr_weights"`
}

// ECNProfile is one queue's marking.
type ECNProfile = switchqos.ECN

// OrOff is a profile entry: a value, or the word off, which removes the
// entry from the device.
type OrOff[T any] struct {
	Value T    `yaml:",inline"` // for yamlpos, which lists a value's keys in errors
	Off   bool `yaml:"-"`
}

// Set is an entry with value v.
func Set[T any](v T) OrOff[T] { return OrOff[T]{Value: v} }

// UnmarshalYAML reads `off` or a value. It is the form of yaml.v3's
// unmarshaler that decodes the value with the same (strict) decoder.
func (o *OrOff[T]) UnmarshalYAML(unmarshal func(any) error) error {
	var word string
	if unmarshal(&word) == nil && word == "off" {
		*o = OrOff[T]{Off: true}
		return nil
	}
	return unmarshal(&o.Value)
}

// LoadQoSProfile reads and checks a switch profile; every problem is
// reported as file:line: field: message.
func LoadQoSProfile(path string) (*QoSProfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseQoSProfile(b, path)
}

// ParseQoSProfile decodes and checks a switch profile and reports every
// problem it has.
func ParseQoSProfile(data []byte, file string) (*QoSProfile, error) {
	var p QoSProfile
	ix, err := yamlpos.Decode(data, file, &p)
	if err != nil {
		return nil, err
	}
	var ps yamlpos.Problems
	for i, pr := range p.PFCPriorities {
		if pr < 0 || pr > 7 {
			ix.Add(&ps, fmt.Sprintf("pfc_priorities[%d]", i), "%d is not a priority (0..7)", pr)
		}
	}
	for _, pb := range p.Want().Check(0) { // Want leaves bad priorities out
		ix.Add(&ps, pb.Field, "%s", pb.Msg)
	}
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Want is the profile in the switches' model.
func (p *QoSProfile) Want() switchqos.Config {
	q := switchqos.Config{XoffBytes: p.XoffBytes, XonBytes: p.XonBytes, Alpha: p.PFCAlpha, HeadroomBytes: p.HeadroomBytes,
		Scheduler: p.Scheduler, Weights: p.DWRRWeights}
	for _, pr := range p.PFCPriorities {
		if pr >= 0 && pr < 8 {
			q.PFC[pr] = true
		}
	}
	q.Pools, q.Remove.Pools = split(p.BufferPools)
	q.ECN, q.Remove.ECN = split(p.ECN)
	q.DSCP, q.Remove.DSCP = split(p.DSCPToTC)
	return q
}

// split separates a profile map into the entries to set (nil if none) and
// the keys to remove, sorted.
func split[K int | string, V any](m map[K]OrOff[V]) (set map[K]V, off []K) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k].Off {
			off = append(off, k)
			continue
		}
		if set == nil {
			set = map[K]V{}
		}
		set[k] = m[k].Value
	}
	return set, off
}
