package provision_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// byOS lets the switches' os: pick their drivers: switch 0 runs SONiC,
// switch 1 the Tofino SDE, switch 3 Enterprise SONiC's OpenConfig over
// gNMI; switch 2 keeps the default (NETCONF).
func byOS(lab *inventory.Lab) {
	for i, os := range []string{"sonic", "bf-sde", "", "enterprise-sonic"} {
		lab.Switches[i].QoSDriver, lab.Switches[i].OS = "", os
	}
}

// TestSwitchQoSModels applies, reads back and rolls back one profile on
// a lab whose switches speak four models (SONiC CONFIG_DB, the SDE
// shell, NETCONF, OpenConfig over gNMI), each picked by the inventory's os: through the
// registry, each served by the emulated switches.
func TestSwitchQoSModels(t *testing.T) {
	t.Parallel()
	inv, pool, l := emulatedWith(t, "leafspine:2x2:2@100", byOS, emulator.Options{}, sshdrv.Config{})
	ctx := context.Background()
	sonicSw, sdeSw, ncSw, ocSw := inv.Switches[0].Name, inv.Switches[1].Name, inv.Switches[2].Name, inv.Switches[3].Name
	prof := fullProfile(100000)
	plansFields(t, inv, plan(t, ctx, pool, inv, prof), "queue[3].ecn.kmax_bytes", "dscp[26].tc", "queue[3].dwrr_weight")
	rs, err := provision.ApplySwitches(ctx, pool, inv, prof, true, nil)
	if err != nil || outcomes(rs)["committed"] != 4 {
		t.Fatalf("apply: %v %+v", err, rs)
	}
	drivers := map[string]string{}
	for _, r := range rs {
		drivers[r.Switch] = r.Driver
	}
	if drivers[sonicSw] != "sonic" || drivers[sdeSw] != "sde" || drivers[ncSw] != "netconf" || drivers[ocSw] != "openconfig" {
		t.Errorf("drivers picked by os: %v", drivers)
	}
	if again := plan(t, ctx, pool, inv, prof); len(again) != 0 {
		t.Fatalf("read back after apply differs: %+v", again)
	}

	// A failing SONiC apply-patch (half its changes written) is rolled
	// back to its checkpoint; --atomic rolls back the others too.
	changed := fullProfile(150000)
	before := readAll(t, pool, inv)
	failNext(t, l, sonicSw, emulator.FaultCommit)
	rs, err = provision.ApplySwitches(ctx, pool, inv, changed, true, nil)
	if err == nil || outcomes(rs)["failed"] != 1 || outcomes(rs)["rolled-back"] != 3 {
		t.Fatalf("atomic with a failing SONiC switch: %v %+v", err, rs)
	}
	for _, r := range rs {
		if r.Switch == sonicSw && (!r.Restored || !strings.Contains(r.Error, "device "+sonicSw) || !strings.Contains(r.Error, "apply-patch")) {
			t.Errorf("the failure must name the device and the command, and say it was restored: %+v", r)
		}
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Fatal("not every switch is on its previous config after an atomic failure")
	}

	// A SONiC and an OpenConfig switch that staged are rolled back when
	// another fails.
	failNext(t, l, ncSw, emulator.FaultCommit)
	if rs, err = provision.ApplySwitches(ctx, pool, inv, changed, true, nil); err == nil || outcomes(rs)["rolled-back"] != 3 {
		t.Fatalf("atomic with a failing NETCONF switch: %v %+v", err, rs)
	}
	if after := readAll(t, pool, inv); !reflect.DeepEqual(before, after) {
		t.Fatal("the staged SONiC or OpenConfig switch was not rolled back")
	}
	res, err := pool.Exec(ctx, mustTarget(t, inv, sonicSw), "sudo config list-checkpoints")
	if err != nil || strings.Contains(string(res.Stdout), "labctl-") {
		t.Errorf("checkpoints left behind: %v %s", err, res.Stdout)
	}

	// Not atomic: the change lands everywhere.
	if rs, err := provision.ApplySwitches(ctx, pool, inv, changed, false, nil); err != nil || outcomes(rs)["committed"] != 4 {
		t.Fatalf("apply of the change: %v %+v", err, rs)
	}
	if p := plan(t, ctx, pool, inv, changed); len(p) != 0 {
		t.Fatalf("after the change: %+v", p)
	}
}

func mustTarget(t *testing.T, inv *inventory.Lab, name string) sshdrv.Target {
	t.Helper()
	tg, err := sshdrv.DeviceTarget(inv, name, sshdrv.EndpointSSH)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestUnknownSwitchOS: provision refuses a switch whose os: no driver
// serves before touching any switch, at the lab file's line, with the
// nearest known OS.
func TestUnknownSwitchOS(t *testing.T) {
	t.Parallel()
	inv, pool, _ := emulated(t, "leafspine:1x2:1@100")
	bad := *inv
	bad.Switches = append([]inventory.Switch(nil), inv.Switches...)
	bad.Switches[1].QoSDriver, bad.Switches[1].OS = "", "sonik"
	file := filepath.Join(t.TempDir(), "lab.yaml")
	if err := inventory.WriteFile(file, &bad); err != nil {
		t.Fatal(err)
	}
	lab, err := inventory.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = provision.PlanSwitches(context.Background(), pool, lab, qosProfile(100000), nil)
	want := `switches[1].os: device ` + bad.Switches[1].Name + `: os "sonik": unknown switch OS (did you mean "sonic"?); known: bf-sde, enterprise-sonic, eos, openconfig, sonic`
	if err == nil || !strings.Contains(err.Error(), file+":") || !strings.Contains(err.Error(), want) {
		t.Fatalf("plan with os sonik: %v\nwant %s:LINE: %s", err, file, want)
	}
}
