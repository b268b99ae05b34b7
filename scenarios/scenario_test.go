package scenarios

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/inventory"
)

func TestBuiltinScenariosLoad(t *testing.T) {
	for _, name := range []string{"incast", "allreduce"} {
		s, err := Load(name)
		if err != nil {
			t.Fatalf("Load(%s): %v", name, err)
		}
		if s.Name != name || len(s.Traffic) != 1 {
			t.Errorf("%s: got name %q, %d traffic entries", name, s.Name, len(s.Traffic))
		}
	}
	inc, _ := Load("incast")
	if tr := inc.Traffic[0]; tr.Senders != 16 || tr.Bytes != "1MiB" {
		t.Errorf("incast must be 16 senders x 1MiB, got %+v", tr)
	}
	ar, _ := Load("allreduce")
	if tr := ar.Traffic[0]; tr.Hosts != 8 || tr.Buffer != "64MiB" {
		t.Errorf("allreduce must be 8 hosts x 64MiB, got %+v", tr)
	}
}

func TestParseErrorsNameFileLineField(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"unknown field", "name: x\ntraffic:\n  - pattern: incast\n    sendrs: 3\n",
			[]string{"s.yaml:4: traffic[0].sendrs: unknown field (known here: name, pattern,"}},
		{"semantic problems all reported", `name: x
telemetry:
  interval: soon
traffic:
  - pattern: incast
    bytes: 1 furlong
  - pattern: allreduce
    hosts: 1
    buffer: 1MiB
  - pattern: ring
`, []string{
			"s.yaml:3: telemetry.interval: bad duration",
			"s.yaml:5: traffic[0].senders: an incast needs senders",
			"s.yaml:6: traffic[0].bytes: bad size",
			"s.yaml:8: traffic[1].hosts: an all-reduce ring needs hosts >= 2",
			`s.yaml:10: traffic[2].pattern: unknown pattern "ring"`,
		}},
		{"missing name and traffic", "repetitions: 1\n", []string{"name: a scenario needs a name", "traffic: at least one"}},
		{"rnic polls too often", "name: x\ntelemetry: {rnic_interval: 1ms}\ntraffic:\n  - {pattern: incast, senders: 2}\n",
			[]string{"s.yaml:2: telemetry.rnic_interval: bad duration \"1ms\" (at least 10ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "s.yaml")
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n lacks %q", err, w)
				}
			}
		})
	}
}

func TestLoadUnknownName(t *testing.T) {
	_, err := Load("no-such-scenario")
	if err == nil || !strings.Contains(err.Error(), "built-in: ") {
		t.Fatalf("want a helpful error, got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\ntraffic:\n  - pattern: incast\n    senders: 2\n    bytes: 1MiB\n"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("name: m\ntraffic:\n  - {pattern: workload, cdf: websearch, load: 0.5, duration: 1ms}\nmatrix:\n  - {path: traffic[0].load, values: [0.1, 0.2]}\n  - {path: emulation.lb_params.d, values: [\"2\"]}\n"))
	f.Add([]byte("name: p\nprovision: {switch_profile: testdata/none.yaml}\ntraffic: [{pattern: incast, senders: 2, bytes: 1MiB}]\nmatrix:\n  - {path: \"provision.switch_profile:ecn.3.kmin_bytes\", values: [1]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b, "f.yaml")
		if err == nil && (s.Name == "" || len(s.Traffic) == 0) {
			t.Fatalf("accepted an invalid scenario: %+v", s)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}

func TestEmulationSection(t *testing.T) {
	ok := "name: x\nemulation:\n  engine: packet\n  lb: drill\n  lb_params: {d: \"2\"}\n  transport: irn\ntraffic:\n  - {pattern: incast, senders: 2, bytes: 1MiB}\n"
	s, err := Parse([]byte(ok), "s.yaml")
	if err != nil || s.Emulation.LB != "drill" || s.Emulation.LBParams["d"] != "2" || s.Emulation.Transport != "irn" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{"name: x\nemulation: {engine: flow, lb: drill}\ntraffic: [{pattern: incast, senders: 2, bytes: 1MiB}]\n", "emulation: lb, transport and the packet engine's knobs need the packet engine"},
	} {
		if _, err := Parse([]byte(tc.doc), "s.yaml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestWorkloadPattern(t *testing.T) {
	doc := "name: w\ntraffic:\n  - {name: ws, pattern: workload, cdf: alistorage2019, load: 0.5, duration: 2ms, seed: 3}\n"
	s, err := Parse([]byte(doc), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lab, _ := inventory.Generate("leafspine:2x2:8@100")
	plan, err := MakePlan(s, lab)
	if err != nil {
		t.Fatal(err)
	}
	pt := plan.Points[0]
	if len(pt.Hosts) != 16 || len(pt.Flows) < 100 {
		t.Fatalf("%d hosts, %d flows", len(pt.Hosts), len(pt.Flows))
	}
	if math.Abs(pt.OfferedLoad-0.5)/0.5 > 0.1 || pt.RequestedLoad != 0.5 {
		t.Errorf("requested %.2f, offered %.3f", pt.RequestedLoad, pt.OfferedLoad)
	}
	for _, bad := range []struct{ doc, want string }{
		{"name: w\ntraffic:\n  - {pattern: workload, load: 2, duration: x}\n", "w.yaml:3: traffic[0].cdf: required"},
		{"name: w\ntraffic:\n  - {pattern: workload, cdf: websearch, load: 2, duration: 1ms}\n", "traffic[0].load: must be in (0, 1]"},
		{"name: w\ntraffic:\n  - {pattern: workload, cdf: websearch, load: 0.2, duration: soon}\n", "traffic[0].duration: bad duration"},
	} {
		if _, err := Parse([]byte(bad.doc), "w.yaml"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("got %v, want %q", err, bad.want)
		}
	}
	s.Traffic[0].CDF = "nonesuch"
	if _, err := MakePlan(s, lab); err == nil || !strings.Contains(err.Error(), "shipped:") {
		t.Errorf("unknown CDF: %v", err)
	}
}

// TestRNICIntervalByLab: RNIC counters are polled during the traffic
// every second on hardware and not at all on an emulated lab (whose reads
// would wait for the simulation) unless the scenario sets rnic_interval,
// which holds on both.
func TestRNICIntervalByLab(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		telemetry string
		emulated  bool
		want      time.Duration
	}{
		{"", false, time.Second},
		{"", true, 0},
		{"telemetry: {rnic_interval: 250ms}\n", false, 250 * time.Millisecond},
		{"telemetry: {rnic_interval: 250ms}\n", true, 250 * time.Millisecond},
	} {
		s, err := Parse([]byte("name: x\n"+c.telemetry+"traffic:\n  - {pattern: incast, senders: 2, bytes: 1000}\n"), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.RNICInterval(c.emulated); got != c.want {
			t.Errorf("%q emulated %v: %v, want %v", c.telemetry, c.emulated, got, c.want)
		}
	}
}
