package scenarios

import (
	"strings"
	"testing"
)

const overrideDoc = `name: o
lab: leafspine:2x2:4@100
traffic:
  - name: w
    pattern: workload
    cdf: websearch
    load: 0.5
    duration: 5ms
  - name: ring
    pattern: allreduce
    hosts: 4
    buffer: 64MiB
    steps: 1
matrix:
  - path: emulation.lb
    values: [ecmp, drill, letflow]
  - path: traffic[1]
    name: size
    values:
      - {name: ring, pattern: allreduce, hosts: 4, buffer: 64MiB, steps: 1}
      - {name: ring, pattern: allreduce, hosts: 8, buffer: 128MiB, steps: 1}
    labels: [small, large]
`

// Set reaches the field in the scenario and in every swept section that
// holds it; Keep cuts a sweep by label or by value; the variants follow.
func TestSetAndKeepCutAScenario(t *testing.T) {
	s, err := Parse([]byte(overrideDoc), "o.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"traffic[0].duration", "1ms"}, {"traffic[1].buffer", "8MiB"}} {
		if err := s.Set(c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Keep("scheme", "letflow", "ecmp"); err != nil {
		t.Fatal(err)
	}
	if err := s.Keep("size", "large"); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, v := range vs {
		labels = append(labels, v.Label)
		if d, b := v.Scenario.Traffic[0].Duration, v.Scenario.Traffic[1].Buffer; d != "1ms" || b != "8MiB" {
			t.Errorf("%s: duration %s buffer %s, want 1ms and 8MiB", v.Label, d, b)
		}
		if h := v.Scenario.Traffic[1].Hosts; h != 8 {
			t.Errorf("%s: hosts %d, want the kept value's 8", v.Label, h)
		}
	}
	if got := strings.Join(labels, " "); got != "scheme=ecmp/size=large scheme=letflow/size=large" {
		t.Errorf("variants %s", got)
	}
}

func TestSetAndKeepRefuseWhatTheyCannotDo(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(s *Scenario) error
		want string
	}{
		{"swept field", func(s *Scenario) error { return s.Set("emulation.lb", "drill") }, "keep some of its values"},
		{"unknown field", func(s *Scenario) error { return s.Set("traffic[0].nosuch", "1") }, `no field "nosuch"`},
		{"bad value", func(s *Scenario) error { return s.Set("traffic[0].load", "[1, 2") }, "not one YAML value"},
		{"unknown sweep", func(s *Scenario) error { return s.Keep("transport", "irn") }, "no sweep"},
		{"unknown value", func(s *Scenario) error { return s.Keep("scheme", "conga") }, "has ecmp, drill, letflow"},
	} {
		s, err := Parse([]byte(overrideDoc), "o.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.do(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}
