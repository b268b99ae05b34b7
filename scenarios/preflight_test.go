package scenarios

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// TestBadScenariosAreRefusedBeforeAnything: every semantic mistake is
// reported as file:line: field before a run directory exists (the runner
// here has a lab but no SSH: reaching a device would fail differently).
func TestBadScenariosAreRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	lab, err := inventory.Generate("leafspine:2x2:4")
	if err != nil {
		t.Fatal(err)
	}
	const incast = "traffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"name escapes --out", "name: ../../x\n" + incast, "s.yaml:1: name: \"../../x\""},
		{"absolute name", "name: /tmp/x\n" + incast, "s.yaml:1: name:"},
		{"traffic name escapes", "name: ok\ntraffic: [{name: ../a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB}]\n", "traffic[0].name:"},
		{"unknown receiver", "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h99, bytes: 1MiB}]\n", `s.yaml:2: traffic[0].receiver: host "h99" is not in lab`},
		{"more senders than hosts", "name: ok\ntraffic: [{name: a, pattern: incast, senders: 8, receiver: h1, bytes: 1MiB}]\n", "traffic[0].senders: 8 senders, but lab leafspine:2x2:4 has only 7 hosts"},
		{"unknown host in host_list", "name: ok\ntraffic: [{name: a, pattern: allreduce, host_list: [h1, hx], buffer: 1MiB}]\n", `traffic[0].host_list[1]: host "hx"`},
		{"ring larger than the lab", "name: ok\ntraffic: [{name: a, pattern: allreduce, hosts: 9, buffer: 1MiB}]\n", "traffic[0].hosts: 9 hosts, but lab leafspine:2x2:4 has 8"},
		{"NaN load", "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: .nan, duration: 1ms}]\n", "traffic[0].load: must be in (0, 1]"},
		{"infinite load", "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: .inf, duration: 1ms}]\n", "traffic[0].load: must be in (0, 1]"},
		{"negative load", "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: -0.5, duration: 1ms}]\n", "traffic[0].load: must be in (0, 1]"},
		{"msg_size above bytes", "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1KiB, msg_size: 64KiB}]\n", "traffic[0].msg_size: 64KiB is larger than bytes (1KiB)"},
		{"qps 0", "name: ok\ntraffic: [{name: a, pattern: incast, senders: 2, receiver: h1, bytes: 1MiB, qps: 0}]\n", "traffic[0].qps: must be between 1 and 16384"},
		{"repetitions past the limit", "name: ok\nrepetitions: 5000\n" + incast, "s.yaml:2: repetitions: 5000 is above the limit of 1000 (raise it with --max-repetitions)"},
		{"flows past the limit", "name: ok\ntraffic: [{name: a, pattern: workload, cdf: websearch, load: 0.5, duration: 1000s}]\n", "above the limit of 5000000 (raise it with --max-flows)"},
		{"bad topology", "name: ok\nlab: leafspine:2x0:3\n" + incast, "s.yaml:2: lab: topology \"leafspine:2x0:3\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			s, err := Parse([]byte(tc.doc), "s.yaml")
			if err == nil {
				r := &Runner{Lab: lab, OutDir: out}
				if tc.name == "bad topology" {
					r.Lab = nil // the scenario's own lab: is checked
				}
				_, err = r.Run(context.Background(), s)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(out); len(ents) > 0 {
				t.Errorf("a run directory was created: %v", ents[0].Name())
			}
		})
	}
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
