package emulator

import (
	"context"
	"maps"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// TestLabFileEmulationIsTheDefault: a lab file's emulation: section picks
// the twin's engine, switch module and host module; options that name
// their own win over it.
func TestLabFileEmulationIsTheDefault(t *testing.T) {
	t.Parallel()
	src, err := inventory.Generate("leafspine:1x2:1@100")
	if err != nil {
		t.Fatal(err)
	}
	src.Emulation = &inventory.Emulation{LB: "drill", LBParams: map[string]string{"d": "3"}, HostLB: "hf2t"}
	l, err := Start(context.Background(), src, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if s, p := l.FabricLB(); s != "drill" || !maps.Equal(p, map[string]string{"d": "3"}) {
		t.Errorf("switches run %s %v, want the lab file's drill d=3", s, p)
	}
	if h, _ := l.HostLB(); h != "hf2t" {
		t.Errorf("hosts run %q, want the lab file's hf2t", h)
	}

	l2, err := Start(context.Background(), src, Options{Dir: t.TempDir(), LB: "letflow"})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if s, p := l2.FabricLB(); s != "letflow" || p["d"] != "" {
		t.Errorf("switches run %s %v, want the options' letflow", s, p)
	}

	flow := *src
	flow.Emulation = &inventory.Emulation{Engine: fabric.EngineFlow}
	l3, err := Start(context.Background(), &flow, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if _, ok := l3.twin.engine.(*fabric.FlowEngine); !ok {
		t.Errorf("engine %T, want the lab file's flow engine", l3.twin.engine)
	}
}
