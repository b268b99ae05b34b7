package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
)

// TestRNICOverrideDerivesTheProfile: a scheme sweep's rnic: {dcqcn: ...}
// becomes the RNIC profile each variant provisions (ecn.priorities empty
// for off, every priority for on), marked as the emulation's so that a
// hardware lab skips it; with a profile file, its other fields and its
// own priorities are kept.
func TestRNICOverrideDerivesTheProfile(t *testing.T) {
	t.Parallel()
	const sweep = "matrix:\n  - path: emulation\n    values:\n      - {lb: ecmp, rnic: {dcqcn: off}}\n      - {lb: ecmp, rnic: {dcqcn: on}}\n      - {lb: ecmp}\n"
	for _, tc := range []struct {
		name, profile string // profile "" names no file
		want          [][]int
		trust         string
	}{
		{name: "no file", want: [][]int{{}, {0, 1, 2, 3, 4, 5, 6, 7}, nil}},
		{name: "file", profile: "trust: dscp\necn: {priorities: [3], rp: {rpg_ai_rate: 5}}\n", want: [][]int{{}, {3}, nil}, trust: "dscp"},
	} {
		var s *Scenario
		if tc.profile == "" {
			var err error
			s, err = Parse([]byte("name: x\n"+sweep+"traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
		} else {
			s = hostScenario(t, tc.profile, sweep)
		}
		vs, err := s.Variants()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, v := range vs {
			if tc.want[i] == nil {
				if len(v.Profiles) != 0 {
					t.Errorf("%s: variant %d without rnic derived %d profiles", tc.name, i, len(v.Profiles))
				}
				continue
			}
			if len(v.Profiles) != 1 || !v.Profiles[0].Emulation || v.Profiles[0].Field != "provision.rnic_profile" {
				t.Fatalf("%s: variant %d profiles %+v: want one emulation RNIC profile", tc.name, i, v.Profiles)
			}
			p, err := connectx.ParseProfile(v.Profiles[0].YAML, "derived")
			if err != nil {
				t.Fatalf("%s: variant %d: %v", tc.name, i, err)
			}
			if p.ECN == nil || !slices.Equal(p.ECN.Priorities, tc.want[i]) {
				t.Errorf("%s: variant %d ecn %+v, want priorities %v", tc.name, i, p.ECN, tc.want[i])
			}
			if p.Trust != tc.trust || tc.trust != "" && p.ECN.RP["rpg_ai_rate"] != 5 {
				t.Errorf("%s: variant %d lost the file's fields: %s", tc.name, i, v.Profiles[0].YAML)
			}
			if got := forLab(v.Profiles, false); len(got) != 0 {
				t.Errorf("%s: a hardware lab gets %d emulation profiles", tc.name, len(got))
			}
		}
	}
}

// TestRNICOverrideProblems: a bad setting, the flow engine and a sweep
// inside the same profile are refused at their lines.
func TestRNICOverrideProblems(t *testing.T) {
	t.Parallel()
	const traffic = "traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	for _, tc := range []struct{ doc, want string }{
		{"name: x\nemulation: {rnic: {dcqcn: maybe}}\n" + traffic, `s.yaml:2: emulation.rnic.dcqcn: unknown setting "maybe" (on or off)`},
		{"name: x\nemulation: {rnic: {}}\n" + traffic, "s.yaml:2: emulation.rnic.dcqcn: required: on or off"},
		{"name: x\nemulation: {engine: flow, rnic: {dcqcn: off}}\n" + traffic, "s.yaml:2: emulation.rnic: needs the packet engine"},
		{"name: x\nmatrix:\n  - path: emulation\n    values:\n      - {rnic: {dcqcn: of}}\n" + traffic, `s.yaml:5: matrix[0].values[0]: emulation.rnic.dcqcn = (!!map): unknown setting "of"`},
	} {
		_, err := Parse([]byte(tc.doc), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v\nwant it to contain %q", tc.doc, err, tc.want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rnic.yaml"), []byte("ecn: {priorities: [3]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "name: x\nprovision: {rnic_profile: rnic.yaml}\nemulation: {rnic: {dcqcn: off}}\nmatrix:\n  - path: provision.rnic_profile:ecn.priorities\n    values: [[3], [4]]\n" + traffic
	_, err := Parse([]byte(doc), filepath.Join(dir, "s.yaml"))
	if want := "s.yaml:3: emulation.rnic: the matrix also sweeps inside provision.rnic_profile"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %q", err, want)
	}
}
