package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/scenarios"
)

// TestSwitchProfileChangesTheTwin: a QoS profile committed over NETCONF
// takes effect in the fabric twin. With PFC on (the default) the shipped
// incast is lossless and the switches send PAUSE frames; with PFC off and
// no ECN marking (so DCQCN cannot slow the senders), the same incast
// overflows the buffer, and the report shows drops.
func TestSwitchProfileChangesTheTwin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inv, pool, agent, _ := emulatedLabWith(t, "leafspine:1x2:9@100", emulator.Options{Seed: 1, Engine: "packet"})
	s, err := scenarios.Load("incast")
	if err != nil {
		t.Fatal(err)
	}
	run := func() (drops, pfc uint64) {
		t.Helper()
		r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agent}
		o, err := r.Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		p := o.Summary.Points[0]
		return p.Drops, p.PFCPauseFrames
	}
	if drops, pfc := run(); drops != 0 || pfc == 0 {
		t.Fatalf("with PFC: %d drops, %d PAUSE frames; want a lossless incast with PAUSE", drops, pfc)
	}
	lossy := &provision.QoSProfile{XoffBytes: 524288, XonBytes: 393216,
		ECN: map[int]provision.OrOff[provision.ECNProfile]{3: provision.Set(provision.ECNProfile{KminBytes: 64 << 20, KmaxBytes: 64 << 20})}}
	rs, err := provision.ApplySwitches(ctx, pool, inv, lossy, true, nil)
	if err != nil {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	if drops, pfc := run(); drops == 0 || pfc != 0 {
		t.Fatalf("without PFC: %d drops, %d PAUSE frames; want drops and no PAUSE", drops, pfc)
	}
}
