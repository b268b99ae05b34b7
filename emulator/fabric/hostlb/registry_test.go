package hostlb

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

type nop struct{}

func (nop) Send(Host, *Packet) int64 { return 0 }

func newNop(lb.Params) (Module, error) { return nop{}, nil }

func testRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, s := range []Scheme{
		{Name: "spray", New: newNop, Needs: "a programmable NIC", Params: []lb.Param{
			{Name: "ports", Kind: lb.Int, Default: "4", Min: 1, Max: 64, Help: "source ports to spray over"}}},
		{Name: "ratelimit", New: newNop, ConnectX: true},
	} {
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestRegistryRefusesWithReasons: a name registered twice is refused; an
// unknown name is answered with the known ones and the nearest; a bad or
// unknown parameter names the rule or the parameters the module takes.
func TestRegistryRefusesWithReasons(t *testing.T) {
	t.Parallel()
	r := testRegistry(t)
	if err := r.Register(Scheme{Name: "spray", New: newNop}); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("duplicate: %v", err)
	}
	if err := r.Register(Scheme{Name: "bad", New: newNop, Params: []lb.Param{{Name: "x", Kind: lb.Int, Default: "0", Min: 1}}}); err == nil {
		t.Error("a default its own rule refuses was registered")
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string
	}{
		{"sprya", nil, []string{`hostlb: "sprya": unknown host module (did you mean "spray"?); known: ratelimit, spray`}},
		{"zzz", nil, []string{"unknown host module; known: ratelimit, spray"}},
		{"spray", map[string]string{"ports": "0"}, []string{"hostlb: spray: parameter ports:", "want integer >= 1, <= 64"}},
		{"spray", map[string]string{"prots": "2"}, []string{`unknown parameter (did you mean "ports"?); spray takes ports`}},
		{"ratelimit", map[string]string{"ports": "2"}, []string{"ratelimit takes no parameters"}},
	} {
		ps := r.Problems(tc.name, tc.params)
		if len(ps) != 1 {
			t.Errorf("%s %v: %d problems, want 1", tc.name, tc.params, len(ps))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(ps[0].Error(), w) {
				t.Errorf("%s %v: %q lacks %q", tc.name, tc.params, ps[0].Error(), w)
			}
		}
		if _, err := r.New(tc.name, tc.params); err == nil {
			t.Errorf("%s %v: New made a module", tc.name, tc.params)
		}
	}
	if _, err := r.New("spray", map[string]string{"ports": "8"}); err != nil {
		t.Error(err)
	}
}

// TestCheckHardwareRefusesTwinOnlyModules: a module ConnectX cannot run
// is refused for real hosts, saying so and what it needs.
func TestCheckHardwareRefusesTwinOnlyModules(t *testing.T) {
	t.Parallel()
	r := testRegistry(t)
	err := r.CheckHardware("spray")
	if err == nil || !strings.Contains(err.Error(), "real ConnectX firmware cannot run it (a programmable NIC)") {
		t.Errorf("spray on real hosts: %v", err)
	}
	if err := r.CheckHardware("ratelimit"); err != nil {
		t.Errorf("ratelimit runs on ConnectX: %v", err)
	}
}
