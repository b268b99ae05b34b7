package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/inventory"
)

// Limits bound what one run may ask for, so that a typo (an extra zero in
// repetitions, a duration in seconds instead of milliseconds) is refused
// with the limit's name instead of exhausting the controller's memory.
// The CLI raises them with --max-repetitions and --max-flows.
type Limits struct {
	Repetitions   int // per point
	FlowsPerPoint int // estimated before any flow is drawn
}

// DefaultLimits are generous for every paper's experiment: the largest,
// SELB's 10 ms at 0.8 load on 128 hosts, has about 200,000 flows a point.
func DefaultLimits() Limits { return Limits{Repetitions: 1000, FlowsPerPoint: 5_000_000} }

// LabInventory is implemented by LabSources that can say what a lab holds
// without starting it (a running lab's name, say), so that a scenario's
// traffic is checked against its lab before a run directory exists.
type LabInventory interface {
	Inventory(lab string) (*inventory.Lab, error)
}

// Preflight checks every variant's traffic against its lab and the limits
// before anything is created or any device touched: unknown hosts, more
// senders than the lab has, limits passed, the image and profile files
// (missing, with a did-you-mean, or refused by their loaders), an RNIC
// profile with a host module (host_lb) for real hosts, and (schemes, when
// given) the emulated lab's load-balancing scheme and its parameters, and
// (engines, when given) its engine's name.
// Errors are file:line: field:
// message. labOf resolves a variant's lab: a nil lab with no error is one
// it cannot tell about (left to the run), an error is a lab that cannot
// exist (a bad topology, no such file or running lab).
func Preflight(s *Scenario, variants []Variant, labOf func(string) (*inventory.Lab, error), lim Limits, schemes tofino.SchemeCheck, engines func(string) error) error {
	var ps yamlpos.Problems
	if s.Repetitions > lim.Repetitions {
		s.ix.Add(&ps, "repetitions", "%d is above the limit of %d (raise it with --max-repetitions)", s.Repetitions, lim.Repetitions)
	}
	labs := map[string]*inventory.Lab{}
	files := &fileChecks{root: s, schemes: schemes}
	for _, v := range variants {
		spec := cmp.Or(v.Scenario.Lab, DefaultLab)
		lab, seen := labs[spec]
		if !seen {
			var err error
			if lab, err = labOf(spec); err != nil {
				v.Scenario.ix.Add(&ps, "lab", "%v", err)
			}
			labs[spec] = lab
		}
		if lab != nil && !lab.Emulated {
			if p := v.rnicProfile(); p != nil && p.HostLBError() != nil {
				v.Scenario.ix.Add(&ps, "provision.rnic_profile", "lab %s has real hosts: %v", lab.Name, p.HostLBError())
			}
		}
		files.check(v.Scenario, &ps, lab == nil || lab.Emulated) // the twin's schemes bind emulated labs only
		if em := v.Scenario.Emulation; engines != nil && em.Engine != "" {
			if err := engines(em.Engine); err != nil {
				v.Scenario.ix.Add(&ps, "emulation.engine", "%v", err)
			}
		}
		if em := v.Scenario.Emulation; schemes != nil && em.LB != "" && (lab == nil || lab.Emulated) {
			for _, p := range schemes(em.LB, em.LBParams) {
				field := "emulation.lb"
				if p.Param != "" {
					field = "emulation.lb_params." + p.Param
				}
				v.Scenario.ix.Add(&ps, field, "%s", p.Msg)
			}
		}
		for _, e := range v.Entries {
			c := &checker{ix: v.Scenario.ix, ps: &ps, path: fmt.Sprintf("traffic[%d]", e.Index), s: v.Scenario}
			t := v.Scenario.Traffic[e.Index]
			if lab != nil {
				checkOnLab(c, t, lab)
			}
			checkFlows(c, t, lab, lim)
		}
	}
	return dedupe(ps).Err()
}

// checkOnLab checks the hosts an entry names or counts against lab.
func checkOnLab(c *checker, t Traffic, lab *inventory.Lab) {
	has := func(name string) bool {
		return slices.ContainsFunc(lab.Hosts, func(h inventory.Host) bool { return h.Name == name })
	}
	if t.Receiver != "" && !has(t.Receiver) {
		c.add("receiver", "host %q is not in lab %s", t.Receiver, lab.Name)
	}
	for i, h := range t.HostList {
		if !has(h) {
			c.add(fmt.Sprintf("host_list[%d]", i), "host %q is not in lab %s", h, lab.Name)
		}
	}
	n := len(lab.Hosts)
	switch {
	case t.Pattern == PatternIncast && len(t.HostList) == 0 && t.Senders > n-1:
		c.add("senders", "%d senders, but lab %s has only %d hosts besides the receiver", t.Senders, lab.Name, n-1)
	case t.Hosts > n:
		c.add("hosts", "%d hosts, but lab %s has %d", t.Hosts, lab.Name, n)
	}
}

// checkFlows refuses a workload point whose expected flow count passes the
// limit, from the CDF's mean before any flow is drawn.
func checkFlows(c *checker, t Traffic, lab *inventory.Lab, lim Limits) {
	if t.Pattern != PatternWorkload || t.CDF == "" || lab == nil || len(lab.Hosts) == 0 {
		return
	}
	cdf, err := c.s.cdf(t.CDF)
	d, derr := time.ParseDuration(t.Duration)
	if err != nil || derr != nil || cdf.Mean() <= 0 {
		return // reported at load
	}
	hosts := cmp.Or(t.Hosts, len(t.HostList), len(lab.Hosts))
	gbps := rnicGbps(lab, lab.Hosts[0].Name)
	load := hostLoad(t, lab)
	want := float64(hosts) * load * gbps / 8 * float64(d.Nanoseconds()) / cdf.Mean()
	if want > float64(lim.FlowsPerPoint) {
		c.add("duration", "about %.0f flows a point (%d hosts at load %g of their links for %s), above the limit of %d (raise it with --max-flows)",
			want, hosts, load, t.Duration, lim.FlowsPerPoint)
	}
}

// dedupe drops repeats: variants of a matrix share their traffic entries.
func dedupe(ps yamlpos.Problems) yamlpos.Problems {
	var out yamlpos.Problems
	seen := map[string]bool{}
	for _, p := range ps {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// finite is false for NaN and the infinities, which YAML spells .nan and
// .inf and every comparison lets through.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// runName is what a scenario or traffic name may hold: it becomes a
// directory under --out and file names on hosts, so nothing that a path
// or a shell reads specially.
var runName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.=+-]{0,99}$`)

// runNameProblem says what is wrong with s as such a name (what names,
// the reason it matters), or "".
func runNameProblem(what, s string) string {
	if runName.MatchString(s) && !strings.Contains(s, "..") {
		return ""
	}
	return fmt.Sprintf("%q: %s: want letters, digits, _ . - = + (no .. or /)", s, what)
}
