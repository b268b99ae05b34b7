package emulator

import (
	"context"
	"reflect"
	"testing"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// switchConfig is a switch's settings in the packet engine.
func (t *Twin) switchConfig(tt *testing.T, name string) fabric.SwitchConfig {
	tt.Helper()
	c, ok := t.engine.(*fabric.PacketEngine).SwitchConfigOf(name)
	if !ok {
		tt.Fatalf("the twin has no switch %s", name)
	}
	return c
}

// sdeLab starts leafspine:1x1:1 with leaf1 set through the SDE shell
// (spine1 over NETCONF) and returns an SDE-shell session on leaf1.
func sdeLab(t *testing.T) (*Lab, *tofino.SDESession, []string) {
	t.Helper()
	l, pool, tg := leaf1Lab(t, func(sw *inventory.Switch) { sw.QoSDriver = "sde" })
	sw, _ := l.Inventory().Switch("leaf1")
	ports := sw.PortNames()
	return l, tofino.NewSDEQoS(pool).Session(tg, ports), ports
}

// leaf1Lab starts leafspine:1x1:1 on the packet engine after edit changed
// leaf1's inventory entry, and returns a pool and leaf1's SSH target.
func leaf1Lab(t *testing.T, edit func(*inventory.Switch)) (*Lab, *sshdrv.Pool, sshdrv.Target) {
	t.Helper()
	src, _ := inventory.Generate("leafspine:1x1:1@100")
	edit(&src.Switches[1]) // leaf1
	l, err := Start(context.Background(), src, Options{Dir: t.TempDir(), Engine: "packet"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	t.Cleanup(func() { pool.Close() })
	tg, err := sshdrv.DeviceTarget(inv, "leaf1", sshdrv.EndpointSSH)
	if err != nil {
		t.Fatal(err)
	}
	return l, pool, tg
}

// Settings written through the SDE shell reach the twin as NETCONF commits
// do (twinqos.go): thresholds, alpha, headroom, pools, scheduler, weights,
// the RoCE queue's ECN and the lossless mask.
func TestBfshellWritesReachTheTwin(t *testing.T) {
	l, s, _ := sdeLab(t)
	want := switchqos.Config{Alpha: 0.25, HeadroomBytes: 65600,
		Pools:     map[string]int64{switchqos.PoolLossless: 4194320, switchqos.PoolLossy: 6291440},
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 150000, KmaxBytes: 400000, PmaxPercent: 10}},
		Scheduler: switchqos.DWRR, Weights: map[int]int{3: 4}}
	want.PFC[3], want.PFC[4] = true, true
	if _, err := s.Stage(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	c := l.twin.switchConfig(t, "leaf1")
	if !c.PFC || c.LosslessPrios != 0x18 || c.PFCAlpha != 0.25 || c.XoffBytes != c.BufferBytes || c.HeadroomBytes != 65600 ||
		c.BufferBytes != 4194320+6291440 || c.Scheduler != "dwrr" || c.DWRRWeights[3] != 4 ||
		c.ECNKminBytes != 150000 || c.ECNKmaxBytes != 400000 || c.ECNPmax != 0.1 {
		t.Fatalf("twin config: %+v", c)
	}
}

func FuzzBfshellScript(f *testing.F) {
	rb, _ := tofino.ReadbackScript([]string{"1/0", "2/0"}, tofino.DefaultProgram)
	f.Add(rb)
	f.Add("bfrt.tf1.tm.ppg.cfg.add_with_dev_port(pipe=0, ppg_id=1, dev_port=0, icos_3=True)\nbfrt.tf1.tm.pool.cfg.mod(pool='IG_APP_POOL_1', size_cells=5)\n")
	f.Add("try:\n    x = bfrt.port.port.get(DEV_PORT=4, print_ents=False).data[b'$TX_PFC_EN_MAP'] >> 1\nexcept Exception:\n    print(1, [2, 'a'], b'c')\n")
	f.Fuzz(func(t *testing.T, script string) {
		sw, err := newBfSwitch([]string{"1/0", "2/0"}, tofino.DefaultProgram, 12<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := parseScript(script)
		if err != nil {
			return
		}
		in := &pyInterp{sw: sw, vars: map[string]any{}, print: func(string) {}}
		_, _ = in.run(stmts)
	})
}

// A fresh lab reads back what it behaves as: every switch holds the twin's
// default QoS, over NETCONF and in the SDE shell's tables, and the twin's
// switches are configured from what they hold.
func TestFreshSwitchesHoldTheTwinDefaults(t *testing.T) {
	l, s, ports := sdeLab(t)
	running, err := netconf.ParseQoS(l.netconf["spine1"].Running().XML())
	if err != nil || !reflect.DeepEqual(running, defaultQoS(1)) {
		t.Errorf("spine1's running config (%v):\n%+v\nwant\n%+v", err, running, defaultQoS(1))
	}
	if c := l.twin.switchConfig(t, "spine1"); c != fabric.DefaultConfig().SwitchConfig {
		t.Errorf("spine1 in the twin: %+v", c)
	}

	have, cell, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if d := switchqos.Diff(have[p], defaultQoS(cell)); len(d) != 0 || !have[p].PFC[roceQueue] {
			t.Errorf("leaf1 port %s reads back %+v, not the defaults: %+v", p, have[p], d)
		}
	}
	want := fabric.DefaultConfig().SwitchConfig
	twinSwitch(&want, have[ports[0]])
	if c := l.twin.switchConfig(t, "leaf1"); c != want || !c.PFC || c.XoffBytes != 524320 || c.ECNKminBytes != 100_000 {
		t.Errorf("leaf1 in the twin: %+v\nwant %+v", c, want)
	}
}
