package tofino_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
)

var updateSDE = flag.Bool("update-sde", false, "rewrite the SDE scripts' golden files")

func profile() switchqos.Config {
	q := switchqos.Config{XoffBytes: 524288, XonBytes: 393216, HeadroomBytes: 65536,
		Pools:     map[string]int64{switchqos.PoolLossless: 4 << 20, switchqos.PoolLossy: 6 << 20},
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 100000, KmaxBytes: 400000, PmaxPercent: 20}},
		DSCP:      map[int]int{26: 3, 48: 6},
		Scheduler: switchqos.DWRR, Weights: map[int]int{0: 1, 3: 4}}
	q.PFC[3] = true
	return q
}

// sdeSwitch starts a one-leaf emulated lab and returns a session on leaf1.
func sdeSwitch(t *testing.T) (*tofino.SDEQoS, sshdrv.Target, []string, *emulator.Lab) {
	t.Helper()
	l, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", func(src *inventory.Lab) {
		for i := range src.Switches {
			src.Switches[i].QoSDriver = "sde"
		}
	}, emulator.Options{}, sshdrv.Config{})
	sw, _ := inv.Switch("leaf1")
	ports := sw.PortNames()
	return tofino.NewSDEQoS(pool), testlab.Target(t, inv, "leaf1", sshdrv.EndpointSSH), ports, l
}

func TestSDEApplyReadsBackEveryPort(t *testing.T) {
	ctx := context.Background()
	d, tgt, ports, _ := sdeSwitch(t)
	s := d.Session(tgt, ports)
	have, cell, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := profile().Quantize(cell)
	if diffs := switchqos.MergePorts(ports, have, want); len(diffs) == 0 {
		t.Fatal("a fresh switch already matches the profile")
	}
	if rolledBack, err := s.Stage(ctx, profile()); err != nil || rolledBack {
		t.Fatalf("stage: %v (rolled back %v)", err, rolledBack)
	}
	have, _, _ = s.Read(ctx)
	if diffs := switchqos.MergePorts(ports, have, want); len(diffs) != 0 {
		t.Fatalf("after apply: %+v", diffs)
	}
	// the profile's XOFF is not a whole number of 80-byte cells: the plan
	// wants what the switch can hold, and says so in bytes
	if want.XoffBytes != 524320 || have[ports[0]].XoffBytes != 524320 {
		t.Fatalf("xoff %d, read back %d", want.XoffBytes, have[ports[0]].XoffBytes)
	}
	// one changed threshold: one setting for the switch
	changed := profile()
	changed.ECN = map[int]switchqos.ECN{3: {KminBytes: 150000, KmaxBytes: 400000, PmaxPercent: 20}}
	if d := switchqos.MergePorts(ports, have, changed.Quantize(cell)); len(d) != 1 || d[0].Field != "queue[3].ecn.kmin_bytes" || d[0].Ports != nil {
		t.Fatalf("%+v", d)
	}
	// dynamic thresholds instead of static ones
	dyn := profile()
	dyn.XoffBytes, dyn.XonBytes, dyn.Alpha = 0, 0, 0.125
	if _, err := s.Stage(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	have, _, _ = s.Read(ctx)
	if c := have[ports[1]]; c.Alpha != 0.125 || c.XoffBytes != 0 {
		t.Fatalf("alpha not read back: %+v", c)
	}
}

func TestSDEFailedWriteRollsBack(t *testing.T) {
	ctx := context.Background()
	d, tgt, ports, l := sdeSwitch(t)
	s := d.Session(tgt, ports)
	before, _, _ := s.Read(ctx)
	l.FailNext("leaf1", emulator.FaultCommit)
	rolledBack, err := s.Stage(ctx, profile())
	var se *tofino.ShellError
	if !rolledBack || !errors.As(err, &se) || se.Device != "leaf1" || !strings.Contains(se.Answer, "Hardware error") ||
		!strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("rolled back %v, err %v", rolledBack, err)
	}
	after, _, _ := s.Read(ctx)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the switch is not on its previous state:\n%+v\n%+v", before[ports[0]], after[ports[0]])
	}
	// a staged change can be cancelled (--atomic) the same way
	if _, err := s.Stage(ctx, profile()); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if after, _, _ = s.Read(ctx); !reflect.DeepEqual(before, after) {
		t.Fatal("cancel did not restore the previous state")
	}
}

func TestSDEShellRefusesBadCalls(t *testing.T) {
	ctx := context.Background()
	d, tgt, _, _ := sdeSwitch(t)
	for script, answer := range map[string]string{
		"bfrt.tf1.tm.pool.cfg.mod(pool='IG_APP_POOL_1', size_cells=99999999)\n":                                             "application pools would hold",
		"bfrt.tf1.tm.ppg.cfg.add_with_dev_port(pipe=0, ppg_id=200, dev_port=4, dynamic_baf='7%')\n":                         "dynamic_baf is not one of",
		"bfrt.tf1.tm.queue.sched_cfg.mod(pipe=0, pg_id=0, pg_queue=3, max_priority=3)\n":                                    "max_priority wants a string",
		"bfrt.tf1.tm.port.cfg.mod(dev_port=0, pg_id=3)\n":                                                                   "read-only",
		"bfrt.tf1.tm.ppg.cfg.mod_with_dev_port(pipe=0, ppg_id=9, dev_port=0)\n":                                             "Object not found",
		"bfrt.labctl.pipe.SwitchEgress.ecn_red.add_with_set_red(qid=5, kmin_cells=1, kmax_cells=2, pmax_percent=20, x=1)\n": "x is not in the table",
		"bfrt.tf1.tm.nonsense.get()\n": "has no attribute 'nonsense'",
		"import os\n":                  "SyntaxError",
	} {
		if err := d.SSH.WriteFile(ctx, tgt, "/tmp/bad.py", []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := d.SSH.Exec(ctx, tgt, "/opt/bf-sde/run_bfshell.sh -b /tmp/bad.py")
		if err != nil {
			t.Fatal(err)
		}
		if r.ExitStatus == 0 || !strings.Contains(string(r.Stdout), answer) || !strings.Contains(string(r.Stdout), "Traceback") {
			t.Errorf("%s: exit %d: %s", script, r.ExitStatus, r.Stdout)
		}
	}
}

// The scripts are golden files: a change to what the driver sends to a
// switch shows in review.
func TestSDEScriptsGolden(t *testing.T) {
	tm := sampleTM()
	rb, err := tofino.ReadbackScript([]string{"1/0"}, "labctl")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"readback.py": rb,
		"apply.py":    tofino.WriteScript(tm, tm.With(profile()), "labctl"),
		"rollback.py": tofino.WriteScript(tm.With(profile()), tm, "labctl"),
	} {
		p := filepath.Join("testdata", name)
		if *updateSDE {
			os.WriteFile(p, []byte(got), 0o644)
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s changed (go test -update-sde to accept):\n%s", name, got)
		}
	}
	if tofino.WriteScript(tm, tm, "labctl") != "" {
		t.Error("no difference must be no script")
	}
}

func sampleTM() *tofino.TM {
	tm := &tofino.TM{CellBytes: 80, TotalCells: 157286, Pools: map[string]int64{"IG_APP_POOL_0": 117964, "EG_APP_POOL_0": 117964,
		"IG_APP_POOL_1": 0, "EG_APP_POOL_1": 0}, ECN: map[int]tofino.TMRed{}, DSCP: map[int]int{}}
	p := tofino.TMPort{Name: "1/0", DevPort: 0, PGID: 0, ModeTx: "NONE", ModeRx: "NONE", PPGID: 1}
	for q := range p.Queues {
		p.Queues[q] = tofino.TMQueue{PGQueue: q, MaxPriority: "0", Weight: 1023}
	}
	tm.Ports = []tofino.TMPort{p}
	return tm
}

func TestParseReadback(t *testing.T) {
	out, err := os.ReadFile(filepath.Join("testdata", "readback.out"))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := tofino.ParseReadback(string(out))
	if err != nil {
		t.Fatal(err)
	}
	c := tm.Configs()["1/0"]
	if !c.PFC[3] || c.XoffBytes != 524320 || c.XonBytes != 393280 || c.HeadroomBytes != 65600 || c.ECN[3].KminBytes != 100000 ||
		c.DSCP[26] != 3 || c.Scheduler != switchqos.DWRR || c.Weights[3] != 4 || c.Pools[switchqos.PoolLossless] != 4194320 {
		t.Fatalf("%+v", c)
	}
	if _, err := tofino.ParseReadback(strings.Replace(string(out), "labctl-tm end", "", 1)); err == nil {
		t.Fatal("a cut-short read-back was accepted")
	}
}

func FuzzParseReadback(f *testing.F) {
	out, _ := os.ReadFile(filepath.Join("testdata", "readback.out"))
	f.Add(string(out))
	f.Add("labctl-tm cfg 80 1\nlabctl-tm queue 1/0 3 3 3 0 1\nlabctl-tm end\n")
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := tofino.ParseReadback(s)
		if err == nil {
			_ = tm.Configs()
			_ = tofino.WriteScript(tm, tm.With(profile()), "labctl")
		}
	})
}
