package e2e_test

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/scenarios"
)

// TestSchemeCountersReachTheReport: the twin's load-balancing modules'
// counters travel the whole way on an emulated lab — the switches' gNMI
// targets, the collectors, the run's archive — into the report: a small
// ring all-reduce between two racks shows LetFlow's flowlets (> 0, at
// least one per flow leaving its rack) and Reunion's elephants and
// reroutes in the point summaries and the report's Scheme counters table.
func TestSchemeCountersReachTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	out, counts := runSchemeCounts(t, `name: scheme-counters
lab: leafspine:2x2:4@100
telemetry:
  interval: 100us
traffic:
  - {name: ring, pattern: allreduce, hosts: 8, buffer: 8MiB, steps: 1}
matrix:
  - path: emulation
    name: scheme
    values:
      - {transport: gbn, lb: letflow}
      - {transport: gbn, lb: reunion, lb_params: {interval_us: "100"}}
    labels: [letflow, reunion]
`)
	// A ring over two racks crosses between them at least twice: each
	// such flow starts at least one flowlet at its source ToR.
	if n := counts["letflow"]["switch/flowlets"]; n < 2 {
		t.Errorf("LetFlow: %d flowlets in the report, want at least one per flow between the racks", n)
	}
	for _, name := range []string{"elephants", "reroutes", "notifications"} {
		if _, ok := counts["reunion"]["switch/"+name]; !ok {
			t.Errorf("Reunion: no %s in the report: %v", name, counts["reunion"])
		}
	}
	if _, ok := counts["letflow"]["switch/elephants"]; ok {
		t.Error("LetFlow counts no elephants: the report must not show any")
	}
	tbl := reportTable(t, out.Dir, "Scheme counters")
	for _, want := range []string{"<th>flowlets</th>", "<th>elephants</th>", "<th>reroutes</th>", "<td>letflow</td>", "<td>reunion</td>"} {
		if !strings.Contains(tbl, want) {
			t.Errorf("the Scheme counters table lacks %q:\n%s", want, tbl)
		}
	}
}

// runSchemeCounts runs the scenario text on emulated labs and returns
// its outcome and each point's scheme counters, by scheme label then
// scope/name.
func runSchemeCounts(t *testing.T, text string) (*scenarios.Outcome, map[string]map[string]uint64) {
	t.Helper()
	out := runEmulatedYAML(t, text, 0)
	counts := map[string]map[string]uint64{}
	for _, pt := range out.Summary.Points {
		c := map[string]uint64{}
		for _, sc := range pt.SchemeCounts {
			c[sc.Scope+"/"+sc.Name] = sc.Value
		}
		counts[pt.Scheme] = c
		t.Logf("%s: %v", pt.Scheme, pt.SchemeCounts)
	}
	return out, counts
}

// TestHF2TFlowletsInTheReport: the flowlet increase HF²T brings LetFlow
// (emulator/fabric/hostlb/hf2t's TestHF2TRaisesFlowletsOnAFatTree: the
// same k = 4 fat-tree, Web Search at 0.7 for 5 ms and 25 us timeouts, the
// flows drawn by the scenario's generator rather than lbtest's) shows in
// the report of an emulated lab: more flowlets with HF²T on the hosts,
// and the hosts' stretched gaps, which LetFlow alone has none of. (One
// run gave 822 flowlets alone, 1,362 with HF²T and 793 stretched gaps.)
func TestHF2TFlowletsInTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	_, counts := runSchemeCounts(t, `name: hf2t-counters
lab: fattree:4@100
telemetry:
  interval: 100us
traffic:
  - {name: flows, pattern: workload, cdf: websearch, load: 0.7, load_basis: network, duration: 5ms, seed: 1}
matrix:
  - path: emulation
    name: scheme
    values:
      - {transport: gbn, lb: letflow, lb_params: {timeout_us: "25"}}
      - {transport: gbn, lb: letflow, lb_params: {timeout_us: "25"}, host_lb: hf2t, host_lb_params: {flowlet_us: "25"}}
    labels: [letflow, letflow-hf2t]
`)
	alone, with := counts["letflow"], counts["letflow-hf2t"]
	if with["switch/flowlets"] <= alone["switch/flowlets"] {
		t.Errorf("flowlets: %d with HF²T, %d with LetFlow alone: want more", with["switch/flowlets"], alone["switch/flowlets"])
	}
	if with["hosts/gaps_stretched"] == 0 {
		t.Errorf("HF²T: no stretched gaps in the report: %v", with)
	}
	if _, ok := alone["hosts/gaps_stretched"]; ok {
		t.Errorf("LetFlow alone runs no host module: %v", alone)
	}
}
