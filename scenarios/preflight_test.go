package scenarios

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/inventory"
)

// TestBadScenariosAreRefusedBeforeAnything: every semantic mistake is
// reported as file:line: field before a run directory exists, and before
// any lab is opened (the runner's lab source fails the test if asked to
// open one; without a lab file, the runner has a lab but no SSH).
func TestBadScenariosAreRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:2x2:4")
	if err != nil {
		t.Fatal(err)
	}
	const incast = "traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	bundle := copyBundle(t, "drill", "drll")
	for _, tc := range []struct {
		name, doc, want string
		files           map[string]string // written next to the scenario
		labFile         bool              // the scenario names its own lab: the runner resolves it
	}{
		{name: "name escapes --out", doc: "name: ../../x\n" + incast, want: "s.yaml:1: name: \"../../x\""},
		{name: "absolute name", doc: "name: /tmp/x\n" + incast, want: "s.yaml:1: name:"},
		{name: "traffic name escapes", doc: "name: ok\ntraffic: [{name: ../a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n", want: "traffic[0].name:"},
		{name: "unknown receiver", doc: "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h99, bytes: 1MiB}]\n", want: `s.yaml:2: traffic[0].receiver: host "h99" is not in lab`},
		{name: "more senders than hosts", doc: "name: ok\ntraffic: [{name: a, pattern: incast, senders: 8, receiver: h1, bytes: 1MiB}]\n", want: "s.yaml:2: traffic[0].senders: 8 senders, but lab leafspine:2x2:4 has only 7 hosts"},
		{name: "unknown host in host_list", doc: "name: ok\ntraffic: [{name: a, pattern: allreduce, host_list: [h1, hx], buffer: 1MiB}]\n", want: `s.yaml:2: traffic[0].host_list[1]: host "hx"`},
		{name: "ring larger than the lab", doc: "name: ok\ntraffic: [{name: a, pattern: allreduce, hosts: 9, buffer: 1MiB}]\n", want: "s.yaml:2: traffic[0].hosts: 9 hosts, but lab leafspine:2x2:4 has 8"},
		{name: "NaN load", doc: "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: .nan, duration: 1ms}]\n", want: "s.yaml:2: traffic[0].load: must be in (0, 1]"},
		{name: "infinite load", doc: "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: .inf, duration: 1ms}]\n", want: "s.yaml:2: traffic[0].load: must be in (0, 1]"},
		{name: "negative load", doc: "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: -0.5, duration: 1ms}]\n", want: "s.yaml:2: traffic[0].load: must be in (0, 1]"},
		{name: "NaN size", doc: "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: NaN}]\n", want: `s.yaml:2: traffic[0].bytes: bad size "NaN"`},
		{name: "msg_size above bytes", doc: "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1KiB, msg_size: 64KiB}]\n", want: "s.yaml:2: traffic[0].msg_size: 64KiB is larger than bytes (1KiB)"},
		{name: "qps 0", doc: "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB, qps: 0}]\n", want: "s.yaml:2: traffic[0].qps: must be between 1 and 16384"},
		{name: "repetitions past the limit", doc: "name: ok\nrepetitions: 5000\n" + incast, want: "s.yaml:2: repetitions: 5000 is above the limit of 1000 (raise it with --max-repetitions)"},
		{name: "flows past the limit", doc: "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: 0.5, duration: 1000s}]\n", want: "above the limit of 5000000 (raise it with --max-flows)"},
		{name: "bad topology", doc: "name: ok\nlab: leafspine:2x0:3\n" + incast, want: "s.yaml:2: lab: topology \"leafspine:2x0:3\"", labFile: true},
		{name: "missing lab", doc: "name: ok\nlab: @DIR@/lab.yml\n" + incast, want: "s.yaml:2: lab: lab @DIR@/lab.yml: open @DIR@/lab.yml: no such file", labFile: true},
		{name: "port speed 0", doc: "name: ok\nlab: @DIR@/lab.yaml\n" + incast, files: map[string]string{"lab.yaml": labYAML("0", "3")},
			want: "s.yaml:2: lab: @DIR@/lab.yaml:6: switches[0].ports[0].speed_gbps: speed must be positive", labFile: true},
		{name: "gid_index out of range", doc: "name: ok\nlab: @DIR@/lab.yaml\n" + incast, files: map[string]string{"lab.yaml": labYAML("100", "65")},
			want: "s.yaml:2: lab: @DIR@/lab.yaml:9: hosts[0].rnics[0].gid_index: gid_index 65 is not 0..64", labFile: true},
		{name: "missing switch profile, did you mean", doc: "name: ok\nprovision: {switch_profile: qso.yaml}\n" + incast, files: map[string]string{"qos.yaml": "pfc_priorities: [3]\n"},
			want: `s.yaml:2: provision.switch_profile: @DIR@/qso.yaml: no such file or directory (did you mean "@DIR@/qos.yaml"?)`},
		{name: "bad switch profile", doc: "name: ok\nprovision:\n  switch_profile: qos.yaml\n" + incast, files: map[string]string{"qos.yaml": "pfc_priorities: [3]\nxoff_bytes: 100\nxon_bytes: 200\n"},
			want: "s.yaml:3: provision.switch_profile: @DIR@/qos.yaml:3: xon_bytes: 200 is above xoff_bytes 100"},
		{name: "missing RNIC profile", doc: "name: ok\nprovision: {rnic_profile: rnic.yaml}\n" + incast, want: "s.yaml:2: provision.rnic_profile: @DIR@/rnic.yaml: no such file or directory"},
		{name: "bad RNIC profile", doc: "name: ok\nprovision: {rnic_profile: rnic.yaml}\n" + incast, files: map[string]string{"rnic.yaml": "trust: dscp\npfc_priorities: [3, 9]\n"},
			want: "s.yaml:2: provision.rnic_profile: @DIR@/rnic.yaml:2: pfc_priorities[1]"},
		{name: "missing image, did you mean", doc: "name: ok\nprovision: {image: example-bundl}\n" + incast, files: map[string]string{"example-bundle/x": ""},
			want: `s.yaml:2: provision.image: @DIR@/example-bundl: no such file or directory (did you mean "@DIR@/example-bundle"?)`},
		{name: "unknown lb in the image, did you mean", doc: "name: ok\nprovision: {image: " + bundle + "}\n" + incast,
			want: `s.yaml:2: provision.image: ` + bundle + `/image.yaml:14: lb.scheme: unknown load-balancing scheme (did you mean "drill"?)`},
		{name: "unknown engine, did you mean", doc: "name: ok\nemulation: {engine: flwo}\n" + incast,
			want: `s.yaml:2: emulation.engine: "flwo": unknown engine (did you mean "flow"?); known: flow, packet`},
		{name: "unknown lb, did you mean", doc: "name: ok\nemulation: {lb: conwave}\n" + incast, want: `s.yaml:2: emulation.lb: unknown load-balancing scheme (did you mean "conweave"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, out := t.TempDir(), t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sub := strings.NewReplacer("@DIR@", dir)
			s, err := Parse([]byte(sub.Replace(tc.doc)), filepath.Join(dir, "s.yaml"))
			if err == nil {
				r := &Runner{Lab: lab, OutDir: out, Schemes: twinSchemes, Engines: twinEngines}
				if tc.labFile {
					r.Lab, r.Labs = nil, noOpen{t}
				}
				_, err = r.Run(context.Background(), s)
			}
			want := sub.Replace(tc.want)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, want)
			}
			if strings.Contains(tc.name, "did you mean") && !strings.Contains(err.Error(), "did you mean") {
				t.Errorf("no suggestion: %v", err)
			}
			if ents, _ := os.ReadDir(out); len(ents) > 0 {
				t.Errorf("a run directory was created: %v", ents[0].Name())
			}
		})
	}
}

// noOpen is a lab source that says what a lab file or topology holds, as
// the CLI's does, and fails the test if a lab is opened.
type noOpen struct{ t *testing.T }

func (n noOpen) Inventory(lab string) (*inventory.Lab, error) { return inventory.Resolve(lab) }

func (n noOpen) Open(context.Context, string, Emulation) (*inventory.Lab, func(), error) {
	n.t.Error("a lab was opened before the scenario was checked")
	return nil, nil, errors.New("no labs here")
}

// twinSchemes is the scheme check the CLI passes: the fabric twin's
// registry, whose messages suggest the nearest name.
func twinSchemes(scheme string, params map[string]string) []tofino.SchemeProblem {
	var out []tofino.SchemeProblem
	for _, p := range schemes.MustRegistry().Problems(scheme, params) {
		out = append(out, tofino.SchemeProblem{Param: p.Param, Msg: p.Msg})
	}
	return out
}

// twinEngines is the engine check the CLI passes: the twin's registry.
func twinEngines(name string) error {
	_, err := fabric.Engines().Get(name)
	return err
}

// copyBundle copies the example image bundle with its manifest's text
// old replaced by new (the manifest's sha256 list does not cover itself).
func copyBundle(t *testing.T, old, new string) string {
	t.Helper()
	src := "../drivers/tofino/testdata/example-bundle"
	dst := filepath.Join(t.TempDir(), "bundle")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "image.yaml" {
			b = []byte(strings.Replace(string(b), "scheme: "+old, "scheme: "+new, 1))
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// labYAML is a one-host lab file with its switch port's speed and the
// RNIC's gid_index as given.
func labYAML(speed, gid string) string {
	return `name: t
emulated: true
switches:
  - name: leaf1
    role: leaf
    ports: [{name: "1/0", speed_gbps: ` + speed + `}]
hosts:
  - name: h1
    rnics: [{device: mlx5_0, netdev: ens1f0, gid_index: ` + gid + `, speed_gbps: 100, ip: 10.0.0.1}]
`
}

// TestUnknownSchemeIsRefusedBeforeAnything: the scheme check the CLI
// passes (the twin's registry) sees an emulated variant's lb and
// lb_params, and its problems come back at their lines.
func TestUnknownSchemeIsRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	check := func(scheme string, params map[string]string) []tofino.SchemeProblem {
		var out []tofino.SchemeProblem
		if scheme != "ecmp" {
			out = append(out, tofino.SchemeProblem{Msg: "unknown scheme " + scheme})
		}
		for k := range params {
			out = append(out, tofino.SchemeProblem{Param: k, Msg: "unknown parameter"})
		}
		return out
	}
	doc := "name: ok\nlab: leafspine:2x2:2\nemulation:\n  lb: ecnp\n  lb_params: {d: \"2\"}\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	s, err := Parse([]byte(doc), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = (&Runner{OutDir: out, Schemes: check}).Run(context.Background(), s)
	for _, want := range []string{"s.yaml:4: emulation.lb: unknown scheme ecnp", "s.yaml:5: emulation.lb_params.d: unknown parameter"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("a run directory was created")
	}
}
