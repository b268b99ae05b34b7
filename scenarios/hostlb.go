package scenarios

import (
	"maps"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/internal/yamlpos"
)

// Host modules (an RNIC profile's host_lb) reach the fabric twin through
// the variant's emulation section, which an emulated lab is started with:
// the profile a variant provisions names the module, and the emulation
// takes it unless it names one itself. A hardware lab cannot run one:
// Preflight refuses such a profile for real hosts.

// rnicProfile is the RNIC profile a variant provisions: the matrix's
// derived copy, else the file the scenario names; nil without one, or
// when it cannot be read (provisioning reports why).
func (v *Variant) rnicProfile() *connectx.Profile {
	for _, d := range v.Profiles {
		if d.Field == "provision.rnic_profile" {
			p, err := connectx.ParseProfile(d.YAML, d.Base)
			if err != nil {
				return nil
			}
			return p
		}
	}
	s := v.Scenario
	if s.Provision.RNICProfile == "" {
		return nil
	}
	p, err := connectx.LoadProfile(s.resolve(s.Provision.RNICProfile))
	if err != nil {
		return nil
	}
	return p
}

// foldHostLB makes the host module of the variant's RNIC profile the
// emulation's; an emulation naming another one is a problem.
func (v *Variant) foldHostLB() yamlpos.Problems {
	p := v.rnicProfile()
	if p == nil || p.HostLB == "" {
		return nil
	}
	em := &v.Scenario.Emulation
	var ps yamlpos.Problems
	switch {
	case em.HostLB == "":
		em.HostLB, em.HostLBParams = p.HostLB, maps.Clone(p.HostLBParams)
	case em.HostLB != p.HostLB || !maps.Equal(em.HostLBParams, p.HostLBParams):
		v.Scenario.ix.Add(&ps, "emulation.host_lb", "%s %v, but the RNIC profile (provision.rnic_profile) sets %s %v: name the host module in one place",
			em.HostLB, em.HostLBParams, p.HostLB, p.HostLBParams)
	}
	return ps
}
