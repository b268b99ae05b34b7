package emulator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// TestHostModuleRunsInTheTwin: a lab told to run a host module refuses an
// unknown one with the known names, runs a known one on every host (its
// holds show in the engine's host counters), alongside the switches'
// scheme, and runs none again when told so.
func TestHostModuleRunsInTheTwin(t *testing.T) {
	t.Parallel()
	src, err := inventory.Generate("leafspine:2x2:2@100")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Start(context.Background(), src, Options{Dir: t.TempDir(), LB: "letflow", LBParams: map[string]string{"timeout_us": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.SetHostLB("hf2x", nil); err == nil || !strings.Contains(err.Error(), `unknown host module (did you mean "hf2t"?); known: flbrc, hf2t`) {
		t.Fatalf("unknown module: %v", err)
	}
	if name, _ := l.HostLB(); name != "" {
		t.Fatalf("a refused module left %q set", name)
	}
	// a fixed T of 1 ns and a 2 us timeout: every gap of a paced flow is
	// past T, so HF²T holds whenever dynamic T lets it
	params := map[string]string{"flowlet_us": "2", "t_us": "0.001"}
	if err := l.SetHostLB("hf2t", params); err != nil {
		t.Fatal(err)
	}
	if name, p := l.HostLB(); name != "hf2t" || p["flowlet_us"] != "2" {
		t.Errorf("HostLB = %s %v", name, p)
	}
	run := func(id string) fabric.HostStats {
		s := &perftest.Schedule{ID: id, Epoch: time.Now(), Flows: []perftest.Flow{
			{ID: 0, Src: "h1", Dst: "h3", Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1},
			{ID: 1, Src: "h4", Dst: "h2", Bytes: 1 << 20, MsgSize: 64 << 10, QPs: 1},
		}}
		if _, _, err := l.twin.RunSchedule(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		l.twin.mu.Lock()
		defer l.twin.mu.Unlock()
		return l.twin.engine.(*fabric.PacketEngine).HostStats()
	}
	if st := run("with"); st.Held == 0 || st.MaxHoldNs > 2000 {
		t.Errorf("with HF²T on every host: %+v; want holds of at most the 2 us timeout", st)
	}
	if err := l.SetHostLB("", nil); err != nil {
		t.Fatal(err)
	}
	if st := run("without"); st.Held != 0 {
		t.Errorf("without a host module: %+v", st)
	}
}
