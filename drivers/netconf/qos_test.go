package netconf_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/drivers/switchqos"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fullQoS() switchqos.Config {
	q := switchqos.Config{XoffBytes: 524288, XonBytes: 393216, HeadroomBytes: 65536,
		Pools:     map[string]int64{switchqos.PoolLossless: 4 << 20, switchqos.PoolLossy: 6 << 20},
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 100000, KmaxBytes: 400000, PmaxPercent: 20}},
		DSCP:      map[int]int{26: 3, 48: 6},
		Scheduler: switchqos.DWRR, Weights: map[int]int{0: 1, 3: 4}}
	q.PFC[3] = true
	return q
}

func TestRenderQoSGolden(t *testing.T) {
	got := netconf.RenderQoS(fullQoS())
	golden := filepath.Join("testdata", "qos-full.xml")
	if *update {
		os.WriteFile(golden, []byte(got+"\n"), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got+"\n" != string(want) {
		t.Fatalf("render changed (go test -update to accept):\n%s", got)
	}
	back, err := netconf.ParseQoS(got)
	if err != nil {
		t.Fatal(err)
	}
	if d := switchqos.Diff(back, fullQoS()); len(d) != 0 {
		t.Fatalf("parse(render) differs: %+v", d)
	}
}

func TestQoSModelRoundTrip(t *testing.T) {
	s, _ := dial(t)
	want := fullQoS()
	if err := apply(s, netconf.RenderQoS(want), nil); err != nil {
		t.Fatal(err)
	}
	run, err := s.GetConfig(context.Background(), "running")
	if err != nil {
		t.Fatal(err)
	}
	got, err := netconf.ParseQoS(run)
	if err != nil {
		t.Fatal(err)
	}
	if d := switchqos.Diff(got, want); len(d) != 0 {
		t.Fatalf("read back differs: %+v\n%s", d, run)
	}
	changed := want
	changed.ECN = map[int]switchqos.ECN{3: {KminBytes: 150000, KmaxBytes: 400000, PmaxPercent: 20}}
	if d := switchqos.Diff(got, changed); len(d) != 1 || d[0].Field != "queue[3].ecn.kmin_bytes" {
		t.Fatalf("one changed threshold must be one diff: %+v", d)
	}
	// static thresholds -> dynamic: the merge clears xoff/xon
	dyn := want
	dyn.XoffBytes, dyn.XonBytes, dyn.Alpha = 0, 0, 0.125
	if err := apply(s, netconf.RenderQoS(dyn), nil); err != nil {
		t.Fatal(err)
	}
	if run, err = s.GetConfig(context.Background(), "running"); err != nil {
		t.Fatal(err)
	}
	if got, err = netconf.ParseQoS(run); err != nil || len(switchqos.Diff(got, dyn)) != 0 {
		t.Fatalf("dynamic threshold not read back: %+v", got)
	}
}

// The emulated switch checks the model on validate and commit, with the
// same checks a profile passes (switchqos.Config.Check).
func TestQoSModelRefusesBadValues(t *testing.T) {
	s, _ := dial(t)
	for name, tc := range map[string]struct {
		change func(*switchqos.Config)
		msg    string
	}{
		"kmin above kmax": {func(q *switchqos.Config) { q.ECN = map[int]switchqos.ECN{3: {KminBytes: 5e5, KmaxBytes: 4e5}} }, "exceeds"},
		"zero weight":     {func(q *switchqos.Config) { q.Weights = map[int]int{3: 0} }, "dwrr_weights.3"},
		"odd alpha":       {func(q *switchqos.Config) { q.XoffBytes, q.XonBytes, q.Alpha = 0, 0, 0.3 }, "pfc_alpha"},
		"pools too big":   {func(q *switchqos.Config) { q.Pools = map[string]int64{"lossless": 20 << 20} }, "do not fit"},
	} {
		q := fullQoS()
		tc.change(&q)
		err := apply(s, netconf.RenderQoS(q), nil)
		var ne *netconf.Error
		if !errors.As(err, &ne) || ne.Operation != "validate" || ne.Tag != "invalid-value" || !strings.Contains(ne.Message, tc.msg) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzParseQoS(f *testing.F) {
	f.Add(netconf.RenderQoS(fullQoS()))
	f.Add(`<qos xmlns="urn:labctl:qos"><pfc><priority><id>9</id></priority></pfc></qos>`)
	f.Fuzz(func(t *testing.T, s string) {
		q, err := netconf.ParseQoS(s)
		if err != nil {
			return
		}
		// whatever parses renders and parses back the same
		back, err := netconf.ParseQoS(netconf.RenderQoS(q))
		if err != nil {
			t.Fatalf("render of a parsed config does not parse: %v", err)
		}
		if d := switchqos.Diff(back, q); len(d) != 0 {
			t.Fatalf("%+v", d)
		}
	})
}

// Entries a configuration removes are deleted on the switch, and nothing
// else changes.
func TestQoSModelDeletesRemovedEntries(t *testing.T) {
	s, _ := dial(t)
	ctx := context.Background()
	if err := apply(s, netconf.RenderQoS(fullQoS()), nil); err != nil {
		t.Fatal(err)
	}
	want := fullQoS()
	want.ECN, want.DSCP, want.Pools = nil, map[int]int{26: 3}, map[string]int64{switchqos.PoolLossless: 4 << 20}
	want.Remove = switchqos.Removal{ECN: []int{3}, DSCP: []int{48}, Pools: []string{switchqos.PoolLossy}}
	if err := apply(s, netconf.RenderQoS(want), nil); err != nil {
		t.Fatal(err)
	}
	run, err := s.GetConfig(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	got, err := netconf.ParseQoS(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.ECN[3]; ok || len(got.DSCP) != 1 || len(got.Pools) != 1 || got.Weights[3] != 4 {
		t.Fatalf("after removing queue 3's ECN, DSCP 48 and the lossy pool: %+v", got)
	}
	if d := switchqos.Diff(got, want); len(d) != 0 {
		t.Fatalf("read back differs: %+v", d)
	}
	// deleting what the switch does not have is refused: send only what it holds
	err = apply(s, netconf.RenderQoS(want), nil)
	var ne *netconf.Error
	if !errors.As(err, &ne) || ne.Tag != "data-missing" {
		t.Fatalf("delete of a missing entry: %v", err)
	}
	want.Remove = want.Remove.Within(got)
	if err := apply(s, netconf.RenderQoS(want), nil); err != nil {
		t.Fatalf("with Within: %v", err)
	}
}
