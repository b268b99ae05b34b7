package scenarios

import (
	"fmt"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/internal/yamlpos"
)

// RNICOverride is what a variant changes in its emulated RNICs without a
// profile file: a built-in scenario has no directory to hold one, and the
// papers compare the same scheme with and without DCQCN in one sweep
// ({lb: ecmp, rnic: {dcqcn: off}}). It reaches the hosts the way a profile
// does: the variant provisions an RNIC profile (the scenario's, or an
// empty one) with ecn.priorities set, which the emulated hosts' sysfs
// hands to the twin, and the archive keeps it as the variant's
// rnic-profile.yaml. A hardware lab ignores it, as it does all of
// emulation, and gets the scenario's profile file as written.
type RNICOverride struct {
	// DCQCN on (the twin's default: every priority, or the profile's
	// ecn.priorities when it lists some) or off (no priority: the NICs
	// send at line rate, send no CNPs and ignore those they get).
	DCQCN string `yaml:"dcqcn,omitempty" json:"dcqcn,omitempty"`
}

// DCQCN settings of RNICOverride.
const (
	DCQCNOn  = "on"
	DCQCNOff = "off"
)

// allPriorities is ecn.priorities with DCQCN on every priority, as the
// emulated hosts boot (a function, so that no caller can change it).
func allPriorities() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7} }

func (o *RNICOverride) check(ix *yamlpos.Index, ps *yamlpos.Problems, engine string) {
	if o == nil {
		return
	}
	switch o.DCQCN {
	case DCQCNOn, DCQCNOff:
	case "":
		ix.Add(ps, "emulation.rnic.dcqcn", "required: on or off (or leave rnic out)")
	default:
		ix.Add(ps, "emulation.rnic.dcqcn", "unknown setting %q (on or off)", o.DCQCN)
	}
	if engine == "flow" {
		ix.Add(ps, "emulation.rnic", "needs the packet engine (engine: packet, the default): the flow engine models no RNIC")
	}
}

// foldRNIC turns the emulation's rnic override into the RNIC profile the
// variant provisions: the scenario's profile file (or an empty profile)
// with ecn.priorities set, marked as the emulation's so that a hardware
// lab gets the file instead. A matrix that also sweeps inside the RNIC
// profile is refused: DCQCN is then set in one place.
func (v *Variant) foldRNIC() yamlpos.Problems {
	o := v.Scenario.Emulation.RNIC
	if o == nil || (o.DCQCN != DCQCNOn && o.DCQCN != DCQCNOff) {
		return nil // validate reports it
	}
	ix := v.Scenario.ix
	var ps yamlpos.Problems
	for _, d := range v.Profiles {
		if d.Field == "provision.rnic_profile" {
			ix.Add(&ps, "emulation.rnic", "the matrix also sweeps inside provision.rnic_profile: set DCQCN there (ecn.priorities) or here, not both")
			return ps
		}
	}
	base, data := "emulation.rnic", []byte("{}\n")
	if name := v.Scenario.Provision.RNICProfile; name != "" {
		base = v.Scenario.resolve(name)
		b, err := os.ReadFile(base)
		if err != nil {
			return nil // preflight reports the file
		}
		data = b
	}
	p, err := connectx.ParseProfile(data, base)
	if err != nil {
		return nil // preflight reports the file
	}
	prios := []int{}
	if o.DCQCN == DCQCNOn {
		prios = allPriorities()
		if p.ECN != nil && len(p.ECN.Priorities) > 0 {
			prios = p.ECN.Priorities
		}
	}
	if v.Scenario.Provision.RNICProfile == "" {
		data = nil // a new profile, written in block style
	}
	out, err := setECNPriorities(data, prios, "emulation.rnic: dcqcn "+o.DCQCN)
	if err == nil {
		_, err = connectx.ParseProfile(out, base)
	}
	if err != nil {
		ix.Add(&ps, "emulation.rnic", "dcqcn %s in %s: %v", o.DCQCN, base, err)
		return ps
	}
	v.Profiles = append(v.Profiles, DerivedProfile{Field: "provision.rnic_profile", Base: base, YAML: out, Emulation: true})
	return nil
}

// setECNPriorities is the profile's YAML with ecn.priorities set, its head
// comment saying why.
func setECNPriorities(data []byte, prios []int, why string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	val := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, p := range prios {
		val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(p)})
	}
	if err := setNode(doc.Content[0], []step{{key: "ecn"}, {key: "priorities"}}, val); err != nil {
		return nil, err
	}
	doc.HeadComment = why
	return marshal(&doc)
}

// forLab is the variant's derived profiles an emulated or a hardware lab
// applies: a hardware lab skips those of the emulation section.
func forLab(profiles []DerivedProfile, emulated bool) []DerivedProfile {
	if emulated {
		return profiles
	}
	return slices.DeleteFunc(slices.Clone(profiles), func(d DerivedProfile) bool { return d.Emulation })
}
