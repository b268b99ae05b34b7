package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

const (
	qosYAML = `# the RoCE queue is lossless and marks early
pfc_priorities: [3]
xoff_bytes: 524288
xon_bytes: 393216
ecn:
  3: {kmin_bytes: 100000, kmax_bytes: 400000, pmax_percent: 20}
dscp_to_tc: {26: 3}
`
	rnicYAML = `trust: dscp
pfc_priorities: [3]
ecn:
  priorities: [3]
  np: {min_time_between_cnps: 4}
`
)

// profileScenario writes qos.yaml, rnic.yaml and a scenario whose matrix
// is given into a directory and returns the scenario file's path.
func profileScenario(t *testing.T, matrix string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"qos.yaml": qosYAML, "rnic.yaml": rnicYAML,
		"lossy.yaml":  "xoff_bytes: 524288\nxon_bytes: 393216\necn: {3: off}\n",
		"broken.yaml": "pfc_priorities: [9]\nxoff_bytes: 1\nxon_bytes: 1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := `name: p
lab: leafspine:1x2:4@100
provision: {switch_profile: qos.yaml, rnic_profile: rnic.yaml}
traffic:
  - {name: inc, pattern: incast, senders: 3, receiver: h1, bytes: 256KiB}
matrix:
` + matrix
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadVariants(t *testing.T, path string) (*Scenario, []Variant) {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	return s, vs
}

// TestProfileFieldSweepDerivesProfiles: a sweep inside the switch profile
// and one inside the RNIC profile give every variant a derived profile of
// each: the file with that one field set (added where the file leaves it
// out), everything else as the file has it; the variant's params and
// label carry the value under the field's name, and the scenario keeps
// naming the files.
func TestProfileFieldSweepDerivesProfiles(t *testing.T) {
	path := profileScenario(t, `  - path: provision.switch_profile:ecn.3.kmin_bytes
    values: [50000, 200000]
  - path: provision.rnic_profile:ecn.rp.rpg_time_reset
    name: reset
    values: [100, 300, 600]
`)
	s, vs := loadVariants(t, path)
	if len(vs) != 6 || vs[0].Label != "kmin_bytes=50000/reset=100" || vs[5].Label != "kmin_bytes=200000/reset=600" {
		t.Fatalf("%d variants, first %q, last %q", len(vs), vs[0].Label, vs[len(vs)-1].Label)
	}
	base, err := provision.LoadQoSProfile(filepath.Join(filepath.Dir(path), "qos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		kmin, reset := v.Params["kmin_bytes"], v.Params["reset"]
		if _, ok := kmin.(int64); !ok {
			t.Errorf("%s: kmin_bytes param %#v, want an int64 (the profile field's type)", v.Label, kmin)
		}
		if v.Scenario.Provision.SwitchProfile != "qos.yaml" || v.Scenario.Provision.RNICProfile != "rnic.yaml" {
			t.Errorf("%s: provision %+v; the variant must still name the files", v.Label, v.Scenario.Provision)
		}
		if len(v.Profiles) != 2 || v.Profiles[0].Field != "provision.switch_profile" || v.Profiles[1].Field != "provision.rnic_profile" ||
			v.Profiles[0].Base != filepath.Join(filepath.Dir(path), "qos.yaml") {
			t.Fatalf("%s: derived profiles %+v", v.Label, v.Profiles)
		}
		q, err := provision.ParseQoSProfile(v.Profiles[0].YAML, "derived")
		if err != nil {
			t.Fatal(err)
		}
		want := *base
		want.ECN = map[int]provision.OrOff[provision.ECNProfile]{3: provision.Set(provision.ECNProfile{KminBytes: kmin.(int64), KmaxBytes: 400000, PmaxPercent: 20})}
		if !reflect.DeepEqual(*q, want) {
			t.Errorf("%s: derived switch profile\n%+v\nwant\n%+v", v.Label, *q, want)
		}
		r, err := connectx.ParseProfile(v.Profiles[1].YAML, "derived")
		if err != nil {
			t.Fatal(err)
		}
		if r.Trust != "dscp" || r.ECN == nil || r.ECN.NP["min_time_between_cnps"] != 4 || len(r.ECN.RP) != 1 ||
			r.ECN.RP["rpg_time_reset"] != reset {
			t.Errorf("%s: derived RNIC profile %+v %+v, want the file with rp.rpg_time_reset = %v added", v.Label, r, r.ECN, reset)
		}
	}
	if y := string(vs[0].Profiles[0].YAML); !strings.Contains(y, "dscp_to_tc") ||
		!strings.HasPrefix(y, "# derived by the matrix from qos.yaml:\n#   ecn.3.kmin_bytes = 50000\n") {
		t.Errorf("the derived profile does not say where it comes from or lost what the sweep does not touch:\n%s", y)
	}
	lab, _ := inventory.Generate("leafspine:1x2:4@100")
	plan, err := MakePlan(s, lab)
	if err != nil || len(plan.Points) != 6 {
		t.Fatalf("%v %d points", err, len(plan.Points))
	}
	if p := plan.Points[3]; p.Name != "inc/kmin_bytes=200000/reset=100" || p.Params["kmin_bytes"] != int64(200000) || p.Params["reset"] != 100 {
		t.Errorf("point 3: %s %v", p.Name, p.Params)
	}
}

// TestProfileFieldSweepFollowsTheSweptFile: with the profile file itself
// swept too, each variant derives from the file it names; a whole value
// (an ECN queue's mapping, or off) replaces the node.
func TestProfileFieldSweepFollowsTheSweptFile(t *testing.T) {
	path := profileScenario(t, `  - path: provision.switch_profile
    name: qos
    values: [qos.yaml, lossy.yaml]
  - path: provision.switch_profile:ecn.3
    name: ecn3
    values: [{kmin_bytes: 10000, kmax_bytes: 20000, pmax_percent: 5}, "off"]
`)
	_, vs := loadVariants(t, path)
	for _, v := range vs {
		q, err := provision.ParseQoSProfile(v.Profiles[0].YAML, "derived")
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(v.Profiles[0].Base) != v.Scenario.Provision.SwitchProfile {
			t.Errorf("%s: derived from %s", v.Label, v.Profiles[0].Base)
		}
		lossless := v.Scenario.Provision.SwitchProfile == "qos.yaml"
		if (len(q.PFCPriorities) == 1) != lossless {
			t.Errorf("%s: pfc %v", v.Label, q.PFCPriorities)
		}
		e := q.ECN[3]
		if off := v.Params["ecn3"] == "off"; e.Off != off || (!off && e.Value.KmaxBytes != 20000) {
			t.Errorf("%s: ecn 3 %+v (param %v)", v.Label, e, v.Params["ecn3"])
		}
	}
}

func TestProfileFieldSweepErrors(t *testing.T) {
	// The matrix starts on the scenario's line 7.
	for _, tc := range []struct {
		name, matrix string
		want         string
	}{
		{"not a profile field", "  - path: provision.image:x\n    values: [1]\n",
			`p.yaml:7: matrix[0].path: bad path "provision.image:x": only provision.switch_profile and provision.rnic_profile name a profile`},
		{"colon in a scenario path", "  - path: emulation.lb_params:d\n    values: [1]\n",
			`p.yaml:7: matrix[0].path: bad path "emulation.lb_params:d": only provision.switch_profile and provision.rnic_profile`},
		{"nothing after the colon", "  - path: \"provision.switch_profile:\"\n    values: [1]\n",
			`p.yaml:7: matrix[0].path: bad path "provision.switch_profile:": name a field of the profile`},
		{"unknown profile field", "  - path: provision.switch_profile:ecn.3.kminn\n    values: [1]\n",
			`p.yaml:7: matrix[0].path: in the profile: no field "kminn" at ecn.3 (it has kmin_bytes, kmax_bytes, pmax_percent)`},
		{"queue not a number", "  - path: provision.switch_profile:ecn.roce.kmin_bytes\n    values: [1]\n",
			`p.yaml:7: matrix[0].path: in the profile: ecn is keyed by numbers, not "roce"`},
		{"index past the file's list", "  - path: provision.switch_profile:pfc_priorities[1]\n    values: [4]\n",
			`p.yaml:7: matrix[0].path: provision.switch_profile:pfc_priorities[1]: in qos.yaml: index [1] is past the 1 entries of pfc_priorities`},
		{"wrong type", "  - path: provision.switch_profile:ecn.3.kmin_bytes\n    values: [50000, lots]\n",
			`p.yaml:8: matrix[0].values[1]: provision.switch_profile:ecn.3.kmin_bytes = lots: want an integer, got "lots"`},
		{"refused by the profile's rules", "  - path: provision.switch_profile:ecn.3.kmin_bytes\n    values:\n      - 50000\n      - 500000\n",
			"p.yaml:10: matrix[0].values[1]: provision.switch_profile:ecn.3.kmin_bytes = 500000: kmin_bytes 500000 exceeds kmax_bytes 400000"},
		{"combination in one profile", "  - path: provision.switch_profile:ecn.3.kmin_bytes\n    values: [50000]\n  - path: provision.switch_profile:ecn.3.kmax_bytes\n    values: [400000, 30000]\n",
			"p.yaml:8: matrix[0].values[0]: provision.switch_profile:ecn.3.kmin_bytes = 50000: kmin_bytes 50000 exceeds kmax_bytes 30000 (with kmax_bytes=30000)"},
		{"refused elsewhere in the profile", "  - path: provision.switch_profile:pfc_priorities[0]\n    values: [12]\n",
			"p.yaml:8: matrix[0].values[0]: provision.switch_profile:pfc_priorities[0] = 12: 12 is not a priority (0..7)"},
		{"unknown key in a whole value", "  - path: provision.switch_profile:ecn.3\n    values: [{kmin_bytes: 1, kmax: 2}]\n",
			"p.yaml:8: matrix[0].values[0]: provision.switch_profile:ecn.3 = (!!map): ecn.3.kmax: unknown field (known here: kmin_bytes, kmax_bytes, pmax_percent)"},
		{"RNIC parameter the rules refuse", "  - path: provision.rnic_profile:ecn.rp.rpg_nonsense\n    values: [1]\n",
			"p.yaml:8: matrix[0].values[0]: provision.rnic_profile:ecn.rp.rpg_nonsense = 1: unknown reaction-point parameter"},
		{"broken base file", "  - path: provision.switch_profile\n    values: [broken.yaml]\n  - path: provision.switch_profile:xoff_bytes\n    values: [1000]\n",
			"p.yaml:8: matrix[0].values[0]: provision.switch_profile = broken.yaml: a sweep reaches into this profile, which cannot be used: "},
		{"missing base file", "  - path: provision.switch_profile\n    values: [gone.yaml]\n  - path: provision.switch_profile:xoff_bytes\n    values: [1000]\n",
			"gone.yaml: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := profileScenario(t, tc.matrix)
			_, err := Load(path)
			if err == nil {
				t.Fatal("want an error")
			}
			if got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), ""); !strings.Contains(got, tc.want) {
				t.Errorf("error\n %s\nlacks\n %s", got, tc.want)
			}
		})
	}

	t.Run("no profile named", func(t *testing.T) {
		doc := "name: p\ntraffic:\n  - {pattern: incast, senders: 3, bytes: 1MiB}\nmatrix:\n  - path: provision.rnic_profile:trust\n    values: [pcp]\n"
		_, err := Parse([]byte(doc), "p.yaml")
		if want := "p.yaml:5: matrix[0].path: provision.rnic_profile names no file"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	})
}

// FuzzSetNode: a profile file and a path and value from a scenario, both
// outside input, never panic the setter, and the YAML it derives parses.
func FuzzSetNode(f *testing.F) {
	f.Add([]byte(qosYAML), "ecn.3.kmin_bytes", "50000")
	f.Add([]byte(rnicYAML), "ecn.rp.rpg_time_reset", "300")
	f.Add([]byte("a: [1, 2]\nb: &x {c: 1}\nd: *x\n"), "d.c", "{e: [1]}")
	f.Add([]byte("ecn:\n"), "ecn.3", "off")
	f.Fuzz(func(t *testing.T, doc []byte, path, value string) {
		var root, val yaml.Node
		steps, err := parseSteps(path)
		if err != nil || yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 ||
			yaml.Unmarshal([]byte(value), &val) != nil || len(val.Content) == 0 {
			return
		}
		if setNode(root.Content[0], steps, plainCopy(val.Content[0])) != nil {
			return
		}
		out, err := marshal(&root)
		if err != nil {
			return // yaml.v3 refuses some trees it parsed (e.g. odd anchors)
		}
		var back yaml.Node
		if err := yaml.Unmarshal(out, &back); err != nil {
			t.Fatalf("derived YAML does not parse: %v\n%s", err, out)
		}
	})
}
