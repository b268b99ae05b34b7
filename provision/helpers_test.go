package provision_test

import (
	"context"
	"slices"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

func emulated(tb testing.TB, spec string) (*inventory.Lab, *sshdrv.Pool, *emulator.Lab) {
	tb.Helper()
	return emulatedWith(tb, spec, nil, emulator.Options{}, sshdrv.Config{})
}

// emulatedWith starts a generated lab after edit changed its inventory
// (e.g. which switches use the SDE shell), in opt.Dir if set, and a pool
// configured as cfg.
func emulatedWith(tb testing.TB, spec string, edit func(*inventory.Lab), opt emulator.Options, cfg sshdrv.Config) (*inventory.Lab, *sshdrv.Pool, *emulator.Lab) {
	tb.Helper()
	l, inv, pool := testlab.Start(tb, spec, edit, opt, cfg)
	return inv, pool, l
}

// sdeEvery makes every switch whose index i has i%n == r use the SDE shell.
func sdeEvery(n, r int) func(*inventory.Lab) {
	return func(lab *inventory.Lab) {
		for i := range lab.Switches {
			if i%n == r {
				lab.Switches[i].QoSDriver = "sde"
			}
		}
	}
}

func failNext(tb testing.TB, l *emulator.Lab, device string, f emulator.Fault) {
	tb.Helper()
	if err := l.FailNext(device, f); err != nil {
		tb.Fatal(err)
	}
}

func rnicProfile(tos int) *connectx.Profile {
	return &connectx.Profile{Trust: "dscp", PFCPriorities: []int{3}, RoCETOS: &tos, RoCEMode: 2}
}

// qosProfile's thresholds, ECN kmax and pmax differ from any emulated
// switch's, fresh or with the twin's defaults (lossless 3, XOFF 512 KiB,
// XON 384 KiB, ECN 100000/400000/20%).
func qosProfile(kmin int64) *provision.QoSProfile {
	return &provision.QoSProfile{PFCPriorities: []int{3}, XoffBytes: 262144, XonBytes: 196608,
		ECN: map[int]provision.OrOff[provision.ECNProfile]{3: provision.Set(provision.ECNProfile{KminBytes: kmin, KmaxBytes: 800000, PmaxPercent: 10})}}
}

// plansFields fails unless every switch of the plan has a change of each
// of the fields.
func plansFields(tb testing.TB, inv *inventory.Lab, changes []provision.SwitchChange, fields ...string) {
	tb.Helper()
	for _, sw := range inv.Switches {
		for _, f := range fields {
			if !slices.ContainsFunc(changes, func(c provision.SwitchChange) bool { return c.Switch == sw.Name && c.Field == f }) {
				tb.Errorf("the plan lacks %s on %s: %+v", f, sw.Name, changes)
			}
		}
	}
}

// fullProfile sets every part of the model, in whole 80-byte cells so that
// NETCONF and SDE switches read back the same bytes.
func fullProfile(kmin int64) *provision.QoSProfile {
	p := qosProfile(kmin)
	p.XoffBytes, p.XonBytes, p.HeadroomBytes = 524320, 393280, 65600
	p.BufferPools = map[string]provision.OrOff[int64]{"lossless": provision.Set[int64](4194320), "lossy": provision.Set[int64](6291440)}
	p.DSCPToTC = map[int]provision.OrOff[int]{26: provision.Set(3), 48: provision.Set(6)}
	p.Scheduler, p.DWRRWeights = "dwrr", map[int]int{0: 1, 3: 4}
	return p
}

func outcomes(rs []provision.SwitchResult) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		m[r.Outcome]++
	}
	return m
}

// readAll reads every switch's QoS.
func readAll(tb testing.TB, pool *sshdrv.Pool, inv *inventory.Lab) map[string]any {
	tb.Helper()
	out := map[string]any{}
	for _, sw := range inv.Switches {
		c, err := provision.ReadSwitch(context.Background(), pool, inv, sw.Name)
		if err != nil {
			tb.Fatal(err)
		}
		out[sw.Name] = c
	}
	return out
}
