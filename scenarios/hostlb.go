package scenarios

import (
	"maps"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/drivers/tofino"
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

// CheckHostModules checks every variant's host module and its parameters
// against check (labctl passes the fabric twin's host module registry;
// scenarios import no emulator) before anything runs: problems are
// file:line: field: message, at provision.rnic_profile when the profile
// names the module, else at emulation.host_lb.
func CheckHostModules(s *Scenario, check tofino.SchemeCheck) error {
	variants, err := s.Variants()
	if err != nil {
		return err
	}
	var ps yamlpos.Problems
	for _, v := range variants {
		em := v.Scenario.Emulation
		if em.HostLB == "" {
			continue
		}
		fromProfile := false
		if p := v.rnicProfile(); p != nil && p.HostLB != "" {
			fromProfile = true
		}
		for _, p := range check(em.HostLB, em.HostLBParams) {
			field := "emulation.host_lb"
			switch {
			case fromProfile:
				field = "provision.rnic_profile"
				p.Msg = "host_lb: " + p.Msg
				if p.Param != "" {
					p.Msg = "host_lb_params." + p.Param + ": " + strings.TrimPrefix(p.Msg, "host_lb: ")
				}
			case p.Param != "":
				field = "emulation.host_lb_params." + p.Param
			}
			v.Scenario.ix.Add(&ps, field, "%s", p.Msg)
		}
	}
	return dedupe(ps).Err()
}
