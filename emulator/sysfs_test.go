package emulator

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
)

// TestSysfsWritesReachTheTwin: a setting written on one host's RNIC
// changes that host's NIC in the twin and no other.
func TestSysfsWritesReachTheTwin(t *testing.T) {
	e := &fakeSession{}
	lab := mustLab(t)
	eng := fabric.NewPacketEngine(mustTopo(t), fabric.DefaultConfig())
	l := &Lab{inbox: map[string]bool{}, twin: newTwin(eng, map[string]publisher{}, nil)}
	h := newHost(l, lab.Hosts[0], t.TempDir())
	other := lab.Hosts[1].Name
	dc := func(host string) fabric.DCQCN {
		d, ok := eng.HostDCQCN(host)
		if !ok {
			t.Fatalf("no host %s in the twin", host)
		}
		return d
	}
	if st := h.echoTo("100", "/sys/class/net/ens1f0/ecn/roce_rp/rpg_time_reset", e.session()); st != 0 {
		t.Fatalf("echo: %d %s", st, e.err.String())
	}
	if got := dc(h.inv.Name).RPGTimeResetNs; got != 100_000 {
		t.Errorf("rpg_time_reset 100 us reached the twin as %d ns", got)
	}
	if got := dc(other).RPGTimeResetNs; got != fabric.DefaultConfig().DCQCN.RPGTimeResetNs {
		t.Errorf("another host's rpg_time_reset changed to %d ns", got)
	}
	// CNP generation (an RNIC profile's cnp_generation): one per QP per
	// interval, or one per marked packet at 0.
	h.echoTo("4", "/sys/class/net/ens1f0/ecn/roce_np/min_time_between_cnps", e.session())
	if got := dc(h.inv.Name).MinTimeBetweenCNPsNs; got != 4000 {
		t.Errorf("min_time_between_cnps 4 us reached the twin as %d ns", got)
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_np/min_time_between_cnps", e.session())
	if got := dc(h.inv.Name).MinTimeBetweenCNPsNs; got != 0 {
		t.Errorf("min_time_between_cnps 0 (a CNP per marked packet) reached the twin as %d ns", got)
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_np/enable/3", e.session())
	if d := dc(h.inv.Name); d.NPOff != 1<<3 || d.RPOff != 0 {
		t.Errorf("a notification-point disable on priority 3 must turn off that point on 3 alone: %+v", d)
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_rp/enable/3", e.session())
	if d := dc(h.inv.Name); d.RPOff != 1<<3 {
		t.Errorf("disabling the reaction point on priority 3 must turn it off in the twin: %+v", d)
	}
	h.echoTo("0", "/sys/class/net/ens1f0/ecn/roce_rp/enable/0", e.session())
	h.echoTo("1", "/sys/class/net/ens1f0/ecn/roce_rp/enable/3", e.session())
	if d := dc(h.inv.Name); d.RPOff != 1<<0 {
		t.Errorf("enables are per priority: after rp enable/0=0 and enable/3=1, RPOff = %08b, want 00000001", d.RPOff)
	}
	if d := dc(other); d.RPOff != 0 || d.NPOff != 0 {
		t.Errorf("another host's DCQCN was turned off: %+v", d)
	}
	if st := h.echoTo("1", "/sys/class/net/ens1f0/ecn/roce_rp/nonesuch", e.session()); st == 0 {
		t.Error("sysfs files cannot be created")
	}
	if st := h.echoTo("x", "/sys/class/net/ens1f0/ecn/roce_rp/rpg_ai_rate", e.session()); st == 0 {
		t.Error("a non-integer value must be refused")
	}
}

// TestEmulatedRNICsReportWhatTheTwinRuns: every DCQCN value a fresh
// emulated host reports (OFED sysfs and upstream debugfs), applied to the
// twin's default NIC, changes nothing: devices and twin agree from the
// start, so a plan against an emulated lab shows the real differences.
func TestEmulatedRNICsReportWhatTheTwinRuns(t *testing.T) {
	lab := mustLab(t)
	for _, inbox := range []bool{false, true} {
		l := &Lab{inbox: map[string]bool{lab.Hosts[0].Name: inbox}}
		root := t.TempDir()
		newHost(l, lab.Hosts[0], root).path("/sys") // the tree is written on first use
		want := fabric.DefaultConfig().DCQCN
		got := want
		n := 0
		err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() || (!strings.Contains(p, "/ecn/roce_") && !strings.Contains(p, "/cc_params/")) {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				return err
			}
			name, enable := filepath.Base(p), strings.Contains(p, "/enable/")
			if strings.Contains(p, "/cc_params/") {
				if _, ofed, ok := connectx.OFEDName(name); ok {
					name = ofed
				}
			}
			applyDCQCN(&got, strings.Contains(p, "/roce_rp/"), name, enable, v)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n < 10 {
			t.Fatalf("inbox %v: read %d DCQCN files under %s", inbox, n, root)
		}
		if got != want {
			t.Errorf("inbox %v: the host reports values the twin does not run:\n host  %+v\n twin  %+v", inbox, got, want)
		}
	}
}
