package scenarios

import (
	"strings"
	"testing"
)

func TestWithLoad(t *testing.T) {
	s, err := Parse([]byte(`name: cap
traffic:
  - {name: bg, pattern: workload, cdf: websearch, load: 0.3, duration: 1ms}
  - {name: inc, pattern: incast, senders: 2, bytes: 64KiB}
`), "cap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.WithLoad("", 0.65)
	if err != nil {
		t.Fatal(err)
	}
	if c.Traffic[0].Load != 0.65 || s.Traffic[0].Load != 0.3 || c.Name != "cap-load0.65" {
		t.Errorf("copy load %v, original %v, name %q", c.Traffic[0].Load, s.Traffic[0].Load, c.Name)
	}
	for _, tc := range []struct {
		traffic string
		load    float64
		want    string
	}{
		{"inc", 0.5, `no workload traffic entry named "inc"`},
		{"", 1.5, "cap.yaml:3: traffic[0].load: must be in (0, 1]"},
	} {
		if _, err := s.WithLoad(tc.traffic, tc.load); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithLoad(%q, %v): %v, want %q", tc.traffic, tc.load, err, tc.want)
		}
	}
	m, err := Parse([]byte(`name: m
matrix: [{path: emulation.lb, values: [ecmp, drill]}]
traffic: [{pattern: workload, cdf: websearch, load: 0.3, duration: 1ms}]
`), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WithLoad("", 0.5); err == nil || !strings.Contains(err.Error(), "matrix") {
		t.Errorf("a matrix scenario: %v", err)
	}
}
