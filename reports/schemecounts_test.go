package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/perftest"
)

// TestSchemeCountsPerPoint: a point's scheme counters are each switch's
// increase over its window (last sample in it minus the last before it,
// or its first in it), summed over the switches, hosts' modules apart;
// samples outside the window, and idle ones, do not count; the report's
// table has a column per counter any point has, "–" where a point's
// scheme lacks it, and no row for a point without counters.
func TestSchemeCountsPerPoint(t *testing.T) {
	dir := schemeRun(t, []PointMeta{
		{Name: "lf", Pattern: "incast", Params: map[string]any{ParamScheme: "letflow"}, Hosts: 2, Flows: 1, StartNs: t0, EndNs: t0 + 10*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
		{Name: "re", Pattern: "incast", Params: map[string]any{ParamScheme: "reunion"}, Hosts: 2, Flows: 1, StartNs: t0 + 100*ms, EndNs: t0 + 110*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
		{Name: "ec", Pattern: "incast", Params: map[string]any{ParamScheme: "ecmp"}, Hosts: 2, Flows: 1, StartNs: t0 + 200*ms, EndNs: t0 + 210*ms, TelemetryIntervalNs: ms, LinkGbps: 100},
	})
	var lp lpWriter
	lp.t = t
	c := func(dev, scope, name string, at, v int64, idle bool) {
		tags := fmt.Sprintf("device=%s,name=%s,scope=%s", dev, name, scope)
		if idle {
			tags += ",idle=true"
		}
		lp.add("lb_counters", tags, t0+at, fmt.Sprintf("value=%du", v))
	}
	// LetFlow point: leaf1 from 100 (before) to 130, leaf2 first seen
	// inside at 5 and last at 9; a sample past the window and an idle one
	// inside do not count.
	c("leaf1", "switch", "flowlets", -5*ms, 100, false)
	c("leaf1", "switch", "flowlets", 3*ms, 110, false)
	c("leaf1", "switch", "flowlets", 5*ms, 999, true)
	c("leaf1", "switch", "flowlets", 11*ms, 130, false)
	c("leaf1", "switch", "flowlets", 50*ms, 170, false)
	c("leaf2", "switch", "flowlets", 2*ms, 5, false)
	c("leaf2", "switch", "flowlets", 10*ms, 9, false)
	c("leaf1", "hosts", "gaps_stretched", 0, 7, false)
	c("leaf1", "hosts", "gaps_stretched", 10*ms, 27, false)
	// Reunion point: elephants 0 -> 4, reroutes 2 -> 5 on leaf1.
	c("leaf1", "switch", "elephants", 100*ms, 0, false)
	c("leaf1", "switch", "elephants", 110*ms, 4, false)
	c("leaf1", "switch", "reroutes", 100*ms, 2, false)
	c("leaf1", "switch", "reroutes", 110*ms, 5, false)
	lp.save(dir)

	s := analyseDir(t, dir)
	got := map[string]string{}
	for _, p := range s.Points {
		got[p.Name] = fmt.Sprint(p.SchemeCounts)
	}
	want := map[string]string{
		"lf": "[{flowlets switch 34} {gaps_stretched hosts 20}]", // (130-100) + (9-5); 27-7
		"re": "[{elephants switch 4} {reroutes switch 3}]",
		"ec": "[]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scheme counts %v, want %v", got, want)
	}

	tbl := mdSection(t, s, "Scheme counters")
	for _, line := range []string{
		"| Point | Scheme | elephants | flowlets | reroutes | gaps_stretched (hosts) |",
		"| lf | letflow | – | 34 | – | 20 |",
		"| re | reunion | 4 | – | 3 | – |",
	} {
		if !strings.Contains(tbl, line+"\n") {
			t.Errorf("table lacks %q:\n%s", line, tbl)
		}
	}
	if strings.Contains(tbl, "| ec |") {
		t.Errorf("a point without scheme counters has a row:\n%s", tbl)
	}
	schemeCountsInCSVAndMetrics(t, s)
}

// schemeCountsInCSVAndMetrics: the same counts reach the CSV report (a
// column per counter, empty where a point's scheme does not count it)
// and the regress metrics (lb.<name>, the hosts' lb.<name>_hosts).
func schemeCountsInCSVAndMetrics(t *testing.T, s *Summary) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		if r[col["bucket"]] != "all" {
			continue
		}
		var cells []string
		for _, h := range []string{"lb_elephants", "lb_flowlets", "lb_reroutes", "lb_gaps_stretched_hosts"} {
			i, ok := col[h]
			if !ok {
				t.Fatalf("csv has no %s column: %v", h, rows[0])
			}
			cells = append(cells, r[i])
		}
		got[r[col["point"]]] = strings.Join(cells, ",")
	}
	if want := map[string]string{"lf": ",34,,20", "re": "4,,3,", "ec": ",,,"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("csv scheme counters %v, want %v", got, want)
	}
	m := map[string]float64{}
	for _, x := range Metrics(s) {
		if strings.HasPrefix(x.Name, "lb.") {
			m[x.Scheme+" "+x.Name] = x.Values[0]
		}
	}
	if want := map[string]float64{"letflow lb.flowlets": 34, "letflow lb.gaps_stretched_hosts": 20, "reunion lb.elephants": 4, "reunion lb.reroutes": 3}; fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("scheme counter metrics %v, want %v", m, want)
	}
}

// schemeRun writes a run archive's manifest and flows (one 1 MiB flow
// per point, over the point's span) into a new directory.
func schemeRun(t *testing.T, points []PointMeta) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{RunID: "r1", Scenario: "synth", Outcome: "ok", Points: points}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "manifest.json"), string(b))
	var flows bytes.Buffer
	if err := WriteFlowsHeader(&flows); err != nil {
		t.Fatal(err)
	}
	for i, pm := range m.Points {
		rec := []perftest.FlowRecord{{FlowID: i, Src: "h1", Dst: "h2", Bytes: 1 << 20, StartNs: pm.StartNs, EndNs: pm.EndNs, Status: perftest.StatusOK, Tool: "ib_write_bw"}}
		if err := WriteFlowsCSV(&flows, "r1", pm.Name, rec); err != nil {
			t.Fatal(err)
		}
	}
	putFile(t, filepath.Join(dir, "flows.csv"), flows.String())
	return dir
}

// mdSection is the body of the Markdown report's section titled title
// (up to the next section); the test fails when the report lacks it.
func mdSection(t *testing.T, s *Summary, title string) string {
	t.Helper()
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(md.String(), "## "+title+"\n")
	if !ok {
		t.Fatalf("no %s table in\n%s", title, md.String())
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}
