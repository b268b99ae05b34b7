package scenarios

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
)

// TestShippedScenariosPlan: every built-in scenario parses and plans on
// its lab (or the default one), every matrix variant included.
func TestShippedScenariosPlan(t *testing.T) {
	for _, name := range Builtin() {
		s, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lab, err := inventory.Generate(cmp.Or(s.Lab, DefaultLab))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := MakePlan(s, lab)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(plan.Points) == 0 {
			t.Errorf("%s: no points", name)
		}
		for _, p := range plan.Points {
			if p.RequestedLoad > 0 && (p.OfferedLoad-p.RequestedLoad)/p.RequestedLoad > 0.05 {
				t.Errorf("%s: %s offers %.3f for %.2f", name, p.Name, p.OfferedLoad, p.RequestedLoad)
			}
		}
	}
}

// TestDocsListEveryPattern: the README and docs/scenarios.md document the
// registry's patterns and their fields.
func TestDocsListEveryPattern(t *testing.T) {
	for _, f := range []string{"../README.md", "../docs/scenarios.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		for _, p := range patternRegistry() {
			if !strings.Contains(doc, "pattern: "+p.Name) {
				t.Errorf("%s does not show pattern: %s", f, p.Name)
			}
			if f == "../docs/scenarios.md" {
				for _, field := range p.Fields {
					if !strings.Contains(doc, "`"+field+"`") {
						t.Errorf("%s does not document %s's field `%s`", f, p.Name, field)
					}
				}
			}
		}
		if !strings.Contains(doc, "matrix:") {
			t.Errorf("%s does not document matrix:", f)
		}
	}
}

func TestPatternFieldsAndRules(t *testing.T) {
	for _, tc := range []struct{ traffic, want string }{
		{"{pattern: incast, senders: 2, bytes: 1MiB, buffer: 1MiB}", "traffic[0].buffer: does not apply to pattern incast (it takes senders, receiver, bytes, spread)"},
		{"{pattern: allreduce, hosts: 4, buffer: 1MiB, cdf: websearch}", "traffic[0].cdf: does not apply to pattern allreduce"},
		{"{pattern: permutation}", "traffic[0]: a permutation needs either bytes"},
		{"{pattern: permutation, bytes: 1MiB, cdf: websearch}", "traffic[0]: a permutation needs either bytes"},
		{"{pattern: permutation, cdf: nonesuch}", `traffic[0].cdf: CDF "nonesuch": no such file`},
		{"{pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, pairing: star}", `traffic[0].pairing: unknown pairing "star"`},
		{"{pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, pairing: permutation, intra_rack: 0.2}", "traffic[0].intra_rack: does not apply to pairing: permutation"},
		{"{pattern: workload, cdf: websearch, load: 0.5, duration: 1ms, intra_rack: 1.2}", "traffic[0].intra_rack: must be in [0, 1]"},
		{"{pattern: burst, interval: soon, bursts: -1}", `traffic[0].interval: bad duration "soon"`},
		{"{pattern: burst, bursts: -1}", "traffic[0].bursts: must be >= 1"},
		{"{pattern: ring}", `traffic[0].pattern: unknown pattern "ring" (incast, allreduce, workload, permutation, burst)`},
	} {
		_, err := Parse([]byte("name: x\ntraffic:\n  - "+tc.traffic+"\n"), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), "p.yaml:3: "+tc.want) {
			t.Errorf("%s:\n got %v\nwant p.yaml:3: %s", tc.traffic, err, tc.want)
		}
	}
}

func TestPlanPatternsOnALab(t *testing.T) {
	lab, _ := inventory.Generate("leafspine:2x4:4@100")
	racks := rackMap(lab)
	if len(racks) != 16 || racks["h1"] == racks["h5"] || racks["h1"] != racks["h4"] {
		t.Fatalf("racks %v", racks)
	}
	doc := `name: x
traffic:
  - {name: w, pattern: workload, cdf: alistorage2019, load: 0.5, duration: 2ms, intra_rack: 0.25}
  - {name: p, pattern: permutation, cdf: websearch, hosts: 8}
  - {name: b, pattern: burst, background: 2, background_bytes: 1MiB, senders: 4, bursts: 3, bytes: 64KiB, start: 100us}
`
	s, err := Parse([]byte(doc), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := MakePlan(s, lab)
	if err != nil {
		t.Fatal(err)
	}
	w, p, b := plan.Points[0], plan.Points[1], plan.Points[2]
	intra := 0
	for _, f := range w.Flows {
		if racks[f.Src] == racks[f.Dst] {
			intra++
		}
	}
	if share := float64(intra) / float64(len(w.Flows)); share < 0.2 || share > 0.3 {
		t.Errorf("intra-rack share %.3f of %d flows, want about 0.25", share, len(w.Flows))
	}
	if len(p.Flows) != 8 || len(p.Hosts) != 8 {
		t.Errorf("permutation over 8 hosts: %d flows on %v", len(p.Flows), p.Hosts)
	}
	if len(b.Flows) != 2+3*4 || len(b.Hosts) != 1+1+2+4 {
		t.Errorf("burst: %d flows on %v", len(b.Flows), b.Hosts)
	}
	if b.Flows[2].Offset.Microseconds() != 100 {
		t.Errorf("first burst at %v, want 100us", b.Flows[2].Offset)
	}
}

// TestFilesRelativeToTheScenario: profiles and CDF files named in a
// scenario (or a matrix value) are found next to it.
func TestFilesRelativeToTheScenario(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tiny.cdf"), []byte("1000 0\n2000 100\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(`name: x
traffic:
  - {pattern: workload, cdf: websearch, load: 0.5, duration: 1ms}
matrix:
  - path: traffic[0].cdf
    values: [tiny.cdf, alistorage2019]
`), 0o644)
	wd, _ := os.Getwd()
	os.Chdir(t.TempDir()) // not next to the scenario
	defer os.Chdir(wd)
	s, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lab, _ := inventory.Generate("leafspine:1x2:2@100")
	plan, err := MakePlan(s, lab)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Points[0].Params["workload"] != "tiny" || plan.Points[0].Flows[0].Bytes > 2000 {
		t.Errorf("tiny.cdf: %v", plan.Points[0].Params)
	}
}

// TestReadmeExampleParses: the README's scenario example is valid, given
// the profiles it names (a sweep inside one reads it).
func TestReadmeExampleParses(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "## Scenario files\n\n```yaml\n")
	doc, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README has no scenario example")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"lossless.yaml": "pfc_priorities: [3]\nxoff_bytes: 524288\nxon_bytes: 393216\necn: {3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}}\n",
		"lossy.yaml":    "xoff_bytes: 524288\nxon_bytes: 393216\necn: {3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Parse([]byte(doc), filepath.Join(dir, "README.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := s.Variants()
	if len(s.Traffic) != 5 || len(vs) != 2*3*2*2 {
		t.Errorf("%d traffic entries, %d variants", len(s.Traffic), len(vs))
	}
}
