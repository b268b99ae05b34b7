package tofino_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
)

// The SDE shell is bf_switchd's client: with no bf_switchd on the switch
// it cannot run a script, and the driver says so, naming the device.
func TestSDEQoSNeedsBfSwitchd(t *testing.T) {
	ctx := context.Background()
	d, tgt, ports, _ := sdeSwitch(t)
	if _, _, err := d.Session(tgt, ports).Read(ctx); err != nil {
		t.Fatalf("with the bf_switchd the switch booted with: %v", err)
	}
	r, err := d.SSH.Exec(ctx, tgt, "pgrep -f bin/bf_switchd")
	if err != nil || r.ExitStatus != 0 {
		t.Fatalf("pgrep: %v %+v", err, r)
	}
	if r, err := d.SSH.Exec(ctx, tgt, "kill "+strings.Join(strings.Fields(string(r.Stdout)), " ")); err != nil || r.ExitStatus != 0 {
		t.Fatalf("kill: %v %+v", err, r)
	}
	for i := 0; i < 100; i++ {
		if r, _ := d.SSH.Exec(ctx, tgt, "pgrep -f bin/bf_switchd"); r != nil && r.ExitStatus == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, _, err = d.Session(tgt, ports).Read(ctx)
	var se *tofino.ShellError
	if !errors.As(err, &se) || se.Device != "leaf1" || !strings.Contains(err.Error(), "cannot connect to the bf_switchd CLI server") {
		t.Fatalf("reading QoS with no bf_switchd: %v", err)
	}
}

// A bf_switchd start is a cold start: QoS set through the SDE shell is
// gone after an image activation, as on hardware, and the result says
// bf_switchd restarted. The ECN and DSCP tables are the loaded program's:
// the driver finds the program in the active image, and scripts go under
// the driver's root.
func TestImageActivationResetsSDEQoS(t *testing.T) {
	ctx := context.Background()
	d, tgt, ports, l := sdeSwitch(t)
	fresh, _, err := d.Session(tgt, ports).Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Session(tgt, ports).Stage(ctx, profile()); err != nil {
		t.Fatal(err)
	}
	inv := l.Inventory()
	drv := tofino.NewDriver(d.SSH, inv)
	b := bundle(t, "1", "ecmp", nil, "one") // program lb_ecmp
	if _, err := drv.Push(ctx, []sshdrv.Target{tgt}, b, nil); err != nil {
		t.Fatal(err)
	}
	rs, err := drv.Activate(ctx, []sshdrv.Target{tgt}, "lb@1", nil)
	if err != nil || rs[0].Outcome != tofino.Activated || !rs[0].Restarted {
		t.Fatalf("activate: %v %+v", err, rs)
	}
	if prog, err := d.ActiveProgram(ctx, tgt); err != nil || prog != "lb_ecmp" {
		t.Fatalf("active program %q, %v", prog, err)
	}
	after, _, err := d.Session(tgt, ports).Read(ctx)
	if err != nil || !reflect.DeepEqual(after, fresh) {
		t.Fatalf("after the cold start the switch must read back its defaults (%v):\n%+v\nwant\n%+v", err, after[ports[0]], fresh[ports[0]])
	}
	if _, err := d.Session(tgt, ports).Stage(ctx, profile()); err != nil {
		t.Fatalf("QoS on the image's program: %v", err)
	}
	for script, ok := range map[string]bool{
		"print(bfrt.lb_ecmp.pipe.SwitchEgress.ecn_red.get(qid=3, print_ents=False).data[b'kmin_cells'])\n": true,
		"print(bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=3, print_ents=False).data[b'kmin_cells'])\n":  false,
	} {
		if err := d.SSH.WriteFile(ctx, tgt, "/opt/labctl/qos/probe.py", []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := d.SSH.Exec(ctx, tgt, "/opt/bf-sde/run_bfshell.sh -b /opt/labctl/qos/probe.py")
		if err != nil || (r.ExitStatus == 0) != ok || ok && strings.TrimSpace(string(r.Stdout)) != "1250" {
			t.Errorf("%s: exit %d %s (want success %v)", script, r.ExitStatus, r.Stdout, ok)
		}
	}
	for _, f := range []string{"/opt/labctl/qos/readback.py", "/opt/labctl/qos/apply.py"} {
		if _, err := d.SSH.ReadFile(ctx, tgt, f); err != nil {
			t.Errorf("the driver's script %s: %v", f, err)
		}
	}
}
