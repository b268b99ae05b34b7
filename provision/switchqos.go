package provision

import (
	"fmt"
	"os"

	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/internal/yamlpos"
)

// QoSProfile is the intended switch QoS (the switch profile YAML). Keys
// left out are not managed, except the PFC priorities and thresholds: a
// profile always says which priorities are lossless and how they pause.
type QoSProfile struct {
	// PFCPriorities are the lossless priorities: PFC on, no drop.
	PFCPriorities []int `yaml:"pfc_priorities"`
	// Static PFC thresholds ...
	XoffBytes int64 `yaml:"xoff_bytes"`
	XonBytes  int64 `yaml:"xon_bytes"`
	// ... or a dynamic one (one of switchqos.Alphas).
	PFCAlpha      float64            `yaml:"pfc_alpha"`
	HeadroomBytes int64              `yaml:"headroom_bytes"`
	BufferPools   map[string]int64   `yaml:"buffer_pools"` // lossless, lossy
	ECN           map[int]ECNProfile `yaml:"ecn"`          // by queue
	DSCPToTC      map[int]int        `yaml:"dscp_to_tc"`
	Scheduler     string             `yaml:"scheduler"` // strict | dwrr
	DWRRWeights   map[int]int        `yaml:"dwrr_weights"`
}

// ECNProfile is one queue's marking.
type ECNProfile = switchqos.ECN

// LoadQoSProfile reads and checks a switch profile; every problem is
// reported as file:line: field: message.
func LoadQoSProfile(path string) (*QoSProfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseQoSProfile(b, path)
}

// ParseQoSProfile decodes and checks a switch profile.
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
	if len(ps) == 0 {
		for _, pb := range p.Want().Check(0) {
			ix.Add(&ps, pb.Field, "%s", pb.Msg)
		}
	}
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Want is the profile in the switches' model.
func (p *QoSProfile) Want() switchqos.Config {
	q := switchqos.Config{XoffBytes: p.XoffBytes, XonBytes: p.XonBytes, Alpha: p.PFCAlpha, HeadroomBytes: p.HeadroomBytes,
		Pools: p.BufferPools, ECN: p.ECN, DSCP: p.DSCPToTC, Scheduler: p.Scheduler, Weights: p.DWRRWeights}
	for _, pr := range p.PFCPriorities {
		if pr >= 0 && pr < 8 {
			q.PFC[pr] = true
		}
	}
	return q
}
