package collectors_test

import (
	"strings"
	"testing"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
)

// Gaps name their paths as the configured subscription paths are spelled,
// whichever kind of gap it is.
func TestFormatPath(t *testing.T) {
	t.Parallel()
	elems := func(names ...string) []*pb.PathElem {
		var out []*pb.PathElem
		for _, n := range names {
			out = append(out, &pb.PathElem{Name: n})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    *pb.Path
		want string
	}{
		{"the device's own target is not named", &pb.Path{Target: "leaf1", Elem: []*pb.PathElem{{Name: "interfaces"},
			{Name: "interface", Key: map[string]string{"name": "Ethernet0"}}, {Name: "state"}}}, "/interfaces/interface[name=Ethernet0]/state"},
		{"another target is", &pb.Path{Target: collectors.CountersDB, Elem: elems("COUNTERS", "Ethernet8")}, "COUNTERS_DB:/COUNTERS/Ethernet8"},
		{"keys in order", &pb.Path{Elem: []*pb.PathElem{{Name: "queue", Key: map[string]string{"name": "3", "interface-id": "1/0"}}}},
			"/queue[interface-id=1/0][name=3]"},
		{"no elements", &pb.Path{Target: collectors.CountersDB}, "COUNTERS_DB:/"},
		{"nothing", nil, "/"},
	} {
		if got := collectors.FormatPath("leaf1", tc.p); got != tc.want {
			t.Errorf("%s: FormatPath = %q, want %q", tc.name, got, tc.want)
		}
	}
	// the configured paths read back as written
	for _, s := range append(collectors.DefaultPaths, collectors.LBPaths...) {
		target, rest := "leaf1", s
		if r, ok := strings.CutPrefix(s, collectors.CountersDB+":"); ok {
			target, rest = collectors.CountersDB, r
		}
		p, err := collectors.ParsePath(rest)
		if err != nil {
			t.Fatal(err)
		}
		p.Target = target
		if got := collectors.FormatPath("leaf1", p); got != s {
			t.Errorf("FormatPath(ParsePath(%q)) = %q", s, got)
		}
	}
}
