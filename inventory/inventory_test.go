package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"gopkg.in/yaml.v3"
	"path/filepath"
	"strings"
	"testing"
)

func TestExampleLabIsValid(t *testing.T) {
	lab, err := Resolve("testdata/example-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.Switches) != 2 || len(lab.Hosts) != 1 || len(lab.Links) != 2 {
		t.Fatalf("counts: %d switches %d hosts %d links", len(lab.Switches), len(lab.Hosts), len(lab.Links))
	}
	if want, _ := filepath.Abs("testdata/keys/switch_ed25519"); lab.Credentials["switches"].KeyFile != filepath.Join("testdata", "keys/switch_ed25519") && lab.Credentials["switches"].KeyFile != want {
		t.Errorf("key_file not resolved against the lab file: %q", lab.Credentials["switches"].KeyFile)
	}
	if c, ok := lab.CredentialFor("h1"); !ok || !c.Agent {
		t.Errorf("h1 should use the default (agent) credential, got %+v", c)
	}
	if got := lab.LinkSpeedGbps(lab.Links[0]); got != 100 {
		t.Errorf("link speed %v", got)
	}
}

// TestValidationReportsEveryProblem checks file:line: field for each finding.
func TestValidationReportsEveryProblem(t *testing.T) {
	lab, err := Load("testdata/bad-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = lab.Validate()
	if err == nil {
		t.Fatal("bad lab validated")
	}
	for _, want := range []string{
		"testdata/bad-lab.yaml:3: credentials.empty: no method",
		"testdata/bad-lab.yaml:7: switches[0].role: role \"tor\"",
		"testdata/bad-lab.yaml:8: switches[0].credential: credential \"nope\" is not defined",
		"testdata/bad-lab.yaml:9: switches[0].mgmt.ssh: bad endpoint",
		"testdata/bad-lab.yaml:12: switches[0].ports[1].name: duplicate port \"1/0\"",
		"testdata/bad-lab.yaml:14: hosts[0].name: duplicate device name \"leaf1\"",
		"testdata/bad-lab.yaml:18: hosts[0].rnics[0].ip: bad IP",
		"testdata/bad-lab.yaml:23: hosts[1].rnics[0].speed_gbps: speed must be > 0",
		"testdata/bad-lab.yaml:25: links[0].b: unknown device \"h9\"",
		"testdata/bad-lab.yaml:26: links[1].a: port leaf1:1/0 is already cabled",
		"testdata/bad-lab.yaml:26: links[1].b: h2 has no port or RNIC \"mlx5_1\"",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"inline password", "name: x\ncredentials:\n  c:\n    user: u\n    password: hunter2\n", "f.yaml:5: credentials.c.password: inline secrets are not allowed"},
		{"inline token", "name: x\nservices:\n  influxdb: {url: 'http://a:1', bucket: b, token: abc}\n", "services.influxdb.token: inline secrets"},
		{"unknown key", "name: x\nswitchez: []\n", "f.yaml:2: switchez: unknown field (known here: name,"},
		{"bad link end", "name: x\nlinks:\n  - {a: leaf1, b: 'h1:mlx5_0'}\n", "want device:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if strings.Contains(fmt.Sprint(err), "hunter2") {
				t.Fatal("an error must never echo a secret")
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		spec                         string
		spines, leaves, hosts, links int
		gbps                         float64
	}{
		{"leafspine:2x4:8@100", 2, 4, 32, 32 + 8, 100},
		{"leafspine:1x2:2", 1, 2, 4, 4 + 2, 100},
		{"leafspine:8x8:16@25", 8, 8, 128, 128 + 64, 25},
		{"leafspine:1x1:300", 1, 1, 300, 301, 100},
	} {
		lab, err := Generate(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if len(lab.Spines()) != tc.spines || len(lab.Leaves()) != tc.leaves || len(lab.Hosts) != tc.hosts || len(lab.Links) != tc.links {
			t.Errorf("%s: %d spines %d leaves %d hosts %d links", tc.spec, len(lab.Spines()), len(lab.Leaves()), len(lab.Hosts), len(lab.Links))
		}
		if err := lab.Validate(); err != nil {
			t.Errorf("%s: generated lab invalid: %v", tc.spec, err)
		}
		if lab.Hosts[0].RNICs[0].SpeedGbps != tc.gbps || !lab.Emulated {
			t.Errorf("%s: speed %v emulated %v", tc.spec, lab.Hosts[0].RNICs[0].SpeedGbps, lab.Emulated)
		}
	}
	for _, bad := range []string{"leafspine:0x4:8", "leafspine:2x4", "fattree:3", "fattree:40", "leafspine:1x100:100", "leafspine:1x1:1@0"} {
		if _, err := Generate(bad); err == nil {
			t.Errorf("Generate(%q) accepted", bad)
		}
	}
}

// TestGenerateLinkDelay: a spec's delay option sets every link's one-way
// delay (1 us without it) on both topologies, and a bad option is refused
// naming what is wrong.
func TestGenerateLinkDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		want int64
	}{
		{"leafspine:2x4:8@100", DefaultLinkDelayNs},
		{"leafspine:2x4:8@100,delay=5us", 5000},
		{"leafspine:1x2:2,delay=1.5µs", 1500},
		{"fattree:4,delay=500ns", 500},
		{"fattree:4@40,delay=5us", 5000},
	} {
		if !IsGeneratorSpec(tc.spec) {
			t.Errorf("%s: not taken for a generated topology", tc.spec)
		}
		lab, err := Generate(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if err := lab.Validate(); err != nil {
			t.Errorf("%s: generated lab invalid: %v", tc.spec, err)
		}
		for _, l := range lab.Links {
			if l.DelayNs != tc.want {
				t.Fatalf("%s: link %v-%v delay %d ns, want %d", tc.spec, l.A, l.B, l.DelayNs, tc.want)
			}
		}
		if lab.Name != tc.spec {
			t.Errorf("%s: named %q", tc.spec, lab.Name)
		}
	}
	for spec, want := range map[string]string{
		"fattree:4,delay=0":             "from 1ns",
		"fattree:4,delay=-1us":          "from 1ns",
		"fattree:4,delay=5":             "from 1ns", // a duration needs its unit
		"fattree:4,delay=2s":            "from 1ns to 1s",
		"fattree:4,delay=":              "want key=value",
		"fattree:4,delay":               "want key=value",
		"fattree:4,buffer=9MB":          `unknown option "buffer" (known: delay)`,
		"fattree:4,dealy=5us":           `unknown option "dealy" (did you mean "delay"?)`,
		"fattree:4,delay=1us,delay=2us": "delay given twice",
		"fattree:3,delay=1us":           "k must be even",
	} {
		if _, err := Generate(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Generate(%q): %v, want an error saying %q", spec, err, want)
		}
	}
}

// FuzzGenerate: a topology spec (a --lab flag, a scenario's lab:) never
// panics Generate, and one it accepts is a valid lab whose every link has
// a delay in the bounds the option allows.
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{"leafspine:2x4:8@100", "fattree:4", "fattree:4@40,delay=5us", "leafspine:1x2:2,delay=1.5µs",
		"fattree:4,delay=", "fattree:4,,", "fattree:4,delay=1us,delay=2us", "leafspine:1x1:1@0.5,dealy=1s", "fattree:8,delay=9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		lab, err := Generate(spec)
		if err != nil {
			return
		}
		if !IsGeneratorSpec(spec) {
			t.Errorf("%q: generated, yet not a generator spec", spec)
		}
		if err := lab.Validate(); err != nil {
			t.Errorf("%q: invalid lab: %v", spec, err)
		}
		for _, l := range lab.Links {
			if l.DelayNs < 1 || l.DelayNs > int64(maxGenDelay) {
				t.Fatalf("%q: link delay %d ns", spec, l.DelayNs)
			}
		}
	})
}

func TestWriteFileRoundTrip(t *testing.T) {
	lab, _ := Generate("leafspine:1x2:2@100")
	lab.Credentials = map[string]Credential{"emulator": {User: "u", KeyFile: "/k"}}
	for i := range lab.Hosts {
		lab.Hosts[i].Credential, lab.Hosts[i].Mgmt.SSH = "emulator", fmt.Sprintf("127.0.0.1:%d", 2000+i)
	}
	for i := range lab.Switches {
		lab.Switches[i].Credential = "emulator"
		lab.Switches[i].Mgmt = Mgmt{SSH: fmt.Sprintf("127.0.0.1:%d", 3000+i), GNMI: fmt.Sprintf("127.0.0.1:%d", 4000+i)}
	}
	p := filepath.Join(t.TempDir(), "lab.yaml")
	if err := WriteFile(p, lab); err != nil {
		t.Fatal(err)
	}
	back, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(lab)
	lab.File, back.File, back.Generator = "", "", lab.Generator
	b, _ := json.Marshal(back)
	if a2, _ := json.Marshal(lab); !bytes.Equal(a2, b) {
		t.Errorf("round trip differs:\n%s\n%s", a, b)
	}
}

func TestSummaryNamesNoSecrets(t *testing.T) {
	lab, _ := Resolve("testdata/example-lab.yaml")
	var b bytes.Buffer
	if err := WriteSummary(&b, lab); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"leaf1", "spine1", "mlx5_0", "192.168.1.10", "credentials (references only): default, switches"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\nlinks:\n  - {a: 'a:1', b: 'b:2'}\n"))
	f.Add([]byte("hosts: [{name: h, rnics: [{device: d}]}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lab, err := Parse(b, "f.yaml")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		_ = lab.Validate() // must not panic
	})
}

func TestWriteAnsible(t *testing.T) {
	lab, err := Resolve("testdata/example-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAnsible(&b, lab); err != nil {
		t.Fatal(err)
	}
	type group struct {
		Hosts    map[string]map[string]any
		Children map[string]struct{ Hosts map[string]map[string]any }
	}
	var inv struct {
		All struct {
			Vars     map[string]any
			Children map[string]group
		}
	}
	if err := yaml.Unmarshal(b.Bytes(), &inv); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	h1 := inv.All.Children["rdma_hosts"].Hosts["h1"]
	if h1["ansible_host"] != "10.0.1.1" || h1["ansible_port"] != 22 || h1["ansible_user"] != "labadmin" {
		t.Errorf("h1: %v", h1)
	}
	sw := inv.All.Children["switches"].Children
	if leaf := sw["leaves"].Hosts["leaf1"]; leaf["ansible_ssh_private_key_file"] == nil || leaf["role"] != "leaf" {
		t.Errorf("leaf1: %v", leaf)
	}
	if _, ok := sw["spines"].Hosts["spine1"]; !ok {
		t.Error("spine1 not in spines")
	}
	args, _ := inv.All.Vars["ansible_ssh_common_args"].(string)
	if !strings.Contains(args, "StrictHostKeyChecking=yes") || !strings.Contains(args, "UserKnownHostsFile="+lab.KnownHosts) {
		t.Errorf("host keys must be verified by Ansible too, against the lab's known_hosts: %q", args)
	}
}

// TestWriteAnsibleRoles: every switch lands in its role's group, an
// aggregation switch too (fat trees have them), and none elsewhere.
func TestWriteAnsibleRoles(t *testing.T) {
	lab, err := Generate("fattree:4")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAnsible(&b, lab); err != nil {
		t.Fatal(err)
	}
	var inv struct {
		All struct {
			Children map[string]struct {
				Children map[string]struct{ Hosts map[string]map[string]any }
			}
		}
	}
	if err := yaml.Unmarshal(b.Bytes(), &inv); err != nil {
		t.Fatal(err)
	}
	groups := inv.All.Children["switches"].Children
	n := 0
	for _, s := range lab.Switches {
		v, ok := groups[ansibleGroup(s.Role)].Hosts[s.Name]
		if !ok || v["role"] != s.Role {
			t.Errorf("switch %s (role %s) not in group %q", s.Name, s.Role, ansibleGroup(s.Role))
		}
	}
	for _, g := range groups {
		n += len(g.Hosts)
	}
	if n != len(lab.Switches) {
		t.Errorf("%d switches in role groups, lab has %d", n, len(lab.Switches))
	}
}

func TestGenerateFatTree(t *testing.T) {
	for _, k := range []int{2, 4, 8} {
		lab, err := Generate(fmt.Sprintf("fattree:%d@100", k))
		if err != nil {
			t.Fatal(err)
		}
		h := k / 2
		if len(lab.Hosts) != k*k*k/4 || len(lab.Spines()) != h*h || len(lab.Leaves()) != k*h || len(lab.Switches) != h*h+k*k {
			t.Errorf("k=%d: %d hosts, %d core, %d edge, %d switches", k, len(lab.Hosts), len(lab.Spines()), len(lab.Leaves()), len(lab.Switches))
		}
		// hosts + edge-agg + agg-core links
		if want := k*k*k/4 + k*h*h + k*h*h; len(lab.Links) != want {
			t.Errorf("k=%d: %d links, want %d", k, len(lab.Links), want)
		}
		if err := lab.Validate(); err != nil {
			t.Errorf("k=%d: %v", k, err)
		}
	}
}

func TestOversubscription(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want float64
	}{
		{"leafspine:8x8:16@100", 2},
		{"leafspine:8x8:8@100", 1},
		{"leafspine:2x4:8@100", 4},
		{"leafspine:4x2:2@100", 1}, // more uplinks than hosts: not below 1
		{"fattree:4", 1},
	} {
		lab, err := Generate(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := lab.Oversubscription(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.spec, got, tc.want)
		}
	}
}
