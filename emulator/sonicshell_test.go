package emulator

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/sonic"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/inventory"
)

// sonicLab starts leafspine:1x1:1 with leaf1 running SONiC (os: sonic).
func sonicLab(t *testing.T) (*Lab, *sshdrv.Pool, sshdrv.Target) {
	t.Helper()
	return leaf1Lab(t, func(sw *inventory.Switch) { sw.QoSDriver, sw.OS = "", "sonic" })
}

// The emulated SONiC switch starts on the twin's defaults in CONFIG_DB,
// refuses a patch that makes an invalid configuration (changing nothing),
// and a patch it applies, or a rollback, becomes its twin switch.
func TestSONiCConfigDBDrivesTheTwin(t *testing.T) {
	t.Parallel()
	l, pool, tg := sonicLab(t)
	ctx := context.Background()
	s := sonic.New(pool).Session(tg, []string{"1/0", "2/0"})
	ports, have, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if d := switchqos.Diff(have[p], defaultQoS(1)); len(d) > 0 {
			t.Errorf("port %s at start differs from the twin's default: %v", p, d)
		}
	}
	def := l.twin.switchConfig(t, "leaf1")

	// kmin above kmax: refused whole
	if err := pool.WriteFile(ctx, tg, "bad.json", []byte(`[{"op": "add", "path": "/WRED_PROFILE/LABCTL_Q3/green_min_threshold", "value": "900000"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := pool.Exec(ctx, tg, "sudo config apply-patch bad.json")
	if err != nil || res.ExitStatus != 2 || !strings.Contains(string(res.Stderr), "Given patch will produce invalid config") {
		t.Fatalf("invalid patch: %v %+v %s", err, res, res.Stderr)
	}
	if _, after, _ := s.Read(ctx); len(switchqos.Diff(after["1/0"], defaultQoS(1))) > 0 {
		t.Fatal("a refused patch changed CONFIG_DB")
	}

	want := defaultQoS(1)
	want.ECN = map[int]switchqos.ECN{3: {KminBytes: 50000, KmaxBytes: 300000, PmaxPercent: 10}}
	if restored, err := s.Stage(ctx, want); err != nil || restored {
		t.Fatalf("stage: %v (restored %v)", err, restored)
	}
	if c := l.twin.switchConfig(t, "leaf1"); c.ECNKminBytes != 50000 || c.ECNKmaxBytes != 300000 {
		t.Errorf("the twin after apply-patch: ECN %d/%d", c.ECNKminBytes, c.ECNKmaxBytes)
	}
	if err := s.Check(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if c := l.twin.switchConfig(t, "leaf1"); c != def {
		t.Errorf("after the rollback the twin is not back on its previous settings:\n%+v\n%+v", c, def)
	}
	if err := s.Check(ctx, defaultQoS(1)); err != nil {
		t.Errorf("after the rollback: %v", err)
	}
	res, err = pool.Exec(ctx, tg, "config rollback labctl-nonesuch")
	if err != nil || res.ExitStatus != 2 || !strings.Contains(string(res.Stderr), "Checkpoint 'labctl-nonesuch' does not exist") {
		t.Errorf("rollback to a missing checkpoint: %v %+v %s", err, res, res.Stderr)
	}
}

// sonic-clear queue watermark needs root, as sonic-utilities' does; the
// SONiC driver's ClearWatermarks runs it with sudo, and the shell counts it.
func TestSONiCClearWatermarks(t *testing.T) {
	t.Parallel()
	l, pool, tg := sonicLab(t)
	ctx := context.Background()
	res, err := pool.Exec(ctx, tg, "sonic-clear queue watermark all")
	if err != nil || res.ExitStatus != 1 || strings.TrimSpace(string(res.Stderr)) != "Root privileges are required for this operation" {
		t.Fatalf("without sudo: %v %+v %q", err, res, res.Stderr)
	}
	res, err = pool.Exec(ctx, tg, "sudo sonic-clear queue watermark everything")
	if err != nil || res.ExitStatus != 2 {
		t.Fatalf("bad subcommand: %v %+v", err, res)
	}
	if n := l.WatermarkClears("leaf1"); n != 0 {
		t.Fatalf("%d clears counted from refused commands", n)
	}
	d := sonic.New(pool)
	for i := 0; i < 2; i++ {
		if err := d.ClearWatermarks(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.WatermarkClears("leaf1"); n != 2 {
		t.Errorf("%d clears, want 2", n)
	}
	if n := l.WatermarkClears("spine1"); n != 0 {
		t.Errorf("spine1 (not SONiC): %d clears", n)
	}
}
