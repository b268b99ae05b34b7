package emulator

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

// An emulated OFED host's ECN/DCQCN sysfs tree is real files under the
// host's root, with ConnectX defaults; writes that change DCQCN take effect
// in the twin. The tree is written when first used (host.usePath).

// writeSys writes the host's /sys tree: per RNIC port, its PCI link and
// its ECN files (the OFED driver's sysfs) or, for an inbox-driver host,
// its debugfs cc_params.
func (h *host) writeSys(rnics []inventory.RNIC, inbox bool) {
	for i, r := range rnics {
		h.writeDeviceLink(r.Netdev, pciAddress(i))
		if inbox {
			h.writeDebugfsDefaults(pciAddress(i))
		} else {
			h.writeECNDefaults(r.Netdev)
		}
	}
}

func (h *host) writeECNDefaults(netdev string) {
	dir := h.rawPath(connectx.ECNDir(netdev))
	for _, point := range []string{"roce_np", "roce_rp"} {
		_ = os.MkdirAll(filepath.Join(dir, point, "enable"), 0o755)
		for p := 0; p < 8; p++ {
			_ = os.WriteFile(filepath.Join(dir, point, "enable", strconv.Itoa(p)), []byte("1\n"), 0o644)
		}
	}
	over := twinRNICDefaults()
	for name, v := range connectx.NPDefaults() {
		if o, ok := over[name]; ok {
			v = o
		}
		_ = os.WriteFile(filepath.Join(dir, "roce_np", name), []byte(strconv.Itoa(v)+"\n"), 0o644)
	}
	for name, v := range connectx.RPDefaults() {
		if o, ok := over[name]; ok {
			v = o
		}
		_ = os.WriteFile(filepath.Join(dir, "roce_rp", name), []byte(strconv.Itoa(v)+"\n"), 0o644)
	}
}

// twinRNICDefaults are the settings in which the emulated RNICs differ
// from ConnectX-5 firmware defaults, so that what a host reports is what
// its twin NIC runs: the twin's NICs, like the papers' ns-3 ones, have no
// DCQCN byte counter (RPG_BYTE_RESET 0; the firmware's is 32767) and send
// a CNP for every marked packet (MIN_TIME_BETWEEN_CNPS 0; the firmware's is
// 4 us). Keys are OFED sysfs names.
func twinRNICDefaults() map[string]int {
	d := fabric.DefaultConfig().DCQCN
	return map[string]int{"rpg_byte_reset": int(d.RPGByteReset), "min_time_between_cnps": int(d.MinTimeBetweenCNPsNs / 1000)}
}

// pciAddress is the PCI function of a host's i-th RNIC port (two ports per
// adapter).
func pciAddress(i int) string { return fmt.Sprintf("0000:%02x:00.%d", 0x04+i/2, i%2) }

// writeDeviceLink makes /sys/class/net/<if>/device the symlink to the PCI
// function, as the kernel does.
func (h *host) writeDeviceLink(netdev, pci string) {
	dir := h.rawPath("/sys/class/net/" + netdev)
	_ = os.MkdirAll(dir, 0o755)
	_ = os.Symlink("../../../"+pci, filepath.Join(dir, "device"))
}

// writeDebugfsDefaults is an upstream-driver host's cc_params directory.
func (h *host) writeDebugfsDefaults(pci string) {
	dir := h.rawPath(connectx.DebugfsDir(pci))
	_ = os.MkdirAll(dir, 0o700)
	over := twinRNICDefaults()
	for name, v := range connectx.DebugfsDefaults() {
		if _, ofed, ok := connectx.OFEDName(name); ok {
			if o, ok := over[ofed]; ok {
				v = o
			}
		}
		_ = os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(v)+"\n"), 0o600)
	}
}

// test emulates `test -d|-e|-f PATH` (exit 0 true, 1 false), which labctl
// uses to tell the driver stacks apart.
func (h *host) test(_ context.Context, argv []string, s *sshd.Session) int {
	if len(argv) != 3 {
		fmt.Fprintln(s.Stderr, "sh: 1: test: only test -d|-e|-f PATH is emulated")
		return 2
	}
	fi, err := os.Lstat(h.path(argv[2]))
	switch {
	case err != nil:
		return 1
	case argv[1] == "-e", argv[1] == "-d" && fi.IsDir(), argv[1] == "-f" && fi.Mode().IsRegular():
		return 0
	case argv[1] == "-d" || argv[1] == "-f":
		return 1
	}
	fmt.Fprintf(s.Stderr, "sh: 1: test: %s: unexpected operator\n", argv[1])
	return 2
}

// readlink prints a symbolic link's target, as readlink(1) without options.
func (h *host) readlink(_ context.Context, argv []string, s *sshd.Session) int {
	if len(argv) != 2 {
		fmt.Fprintln(s.Stderr, "readlink: only readlink PATH is emulated")
		return 1
	}
	target, err := os.Readlink(h.path(argv[1]))
	if err != nil {
		return 1 // readlink prints nothing for a path that is not a link
	}
	fmt.Fprintln(s.Stdout, target)
	return 0
}

// cat prints files of the host's filesystem.
func (h *host) cat(_ context.Context, argv []string, s *sshd.Session) int {
	status := 0
	hw := &hwReader{h: h}
	for _, f := range argv[1:] {
		if b, ok := hw.hwCounter(f); ok { // RDMA hw_counters come from the twin (hwcounters.go)
			s.Stdout.Write(b)
			continue
		}
		b, err := os.ReadFile(h.path(f))
		if err != nil {
			fmt.Fprintf(s.Stderr, "cat: %s: No such file or directory\n", f)
			status = 1
			continue
		}
		s.Stdout.Write(b)
	}
	return status
}

// echoTo writes a value into an existing file, as `echo V > FILE` does to
// sysfs: files cannot be created there and settings take integers.
func (h *host) echoTo(value, file string, s *sshd.Session) int {
	p := h.path(file)
	if _, err := os.Stat(p); err != nil {
		fmt.Fprintf(s.Stderr, "sh: 1: cannot create %s: Permission denied\n", file)
		return 2
	}
	v, err := strconv.Atoi(value)
	if err != nil || v < 0 {
		fmt.Fprintln(s.Stderr, "sh: echo: I/O error") // what a sysfs store rejecting the value looks like
		return 1
	}
	if err := os.WriteFile(p, []byte(strconv.Itoa(v)+"\n"), 0o644); err != nil {
		fmt.Fprintf(s.Stderr, "sh: 1: cannot create %s: %v\n", file, err)
		return 2
	}
	if strings.Contains(file, "/cc_params/") { // upstream driver: debugfs names
		name := path.Base(file)
		if name == "np_cnp_prio" { // writing the priority selects it (mlx5 cong.c)
			_ = os.WriteFile(filepath.Join(filepath.Dir(p), "np_cnp_prio_mode"), []byte("0\n"), 0o600)
		}
		if point, ofed, ok := connectx.OFEDName(name); ok {
			h.lab.twin.configureDCQCN(h.inv.Name, point == "roce_rp", ofed, false, v)
		}
		return 0
	}
	h.lab.twin.configureDCQCN(h.inv.Name, strings.Contains(file, "/roce_rp/"), path.Base(file), strings.Contains(file, "/enable/"), v)
	return 0
}

// configureDCQCN applies one setting written on a host's RNIC to that
// host in the twin. Only the packet engine models DCQCN; the flow engine
// ignores it.
func (t *Twin) configureDCQCN(host string, reactionPoint bool, name string, enable bool, v int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.engine.(interface {
		ConfigureHost(name string, fn func(*fabric.DCQCN)) error
	})
	if !ok {
		return
	}
	_ = e.ConfigureHost(host, func(d *fabric.DCQCN) { applyDCQCN(d, reactionPoint, name, enable, v) }) // every emulated host is in the twin
}

// applyDCQCN sets the field of d an RNIC setting names: a priority's
// enable file (roce_rp or roce_np /enable/<prio>) or an OFED parameter
// (sysfs file name). Settings the twin does not model change nothing.
func applyDCQCN(d *fabric.DCQCN, reactionPoint bool, name string, enable bool, v int) {
	if enable {
		prio, err := strconv.Atoi(name)
		if err != nil || prio < 0 || prio > 7 {
			return
		}
		off := &d.NPOff
		if reactionPoint {
			off = &d.RPOff
		}
		*off &^= 1 << prio
		if v != 1 {
			*off |= 1 << prio
		}
		return
	}
	switch name {
	case "min_time_between_cnps":
		d.MinTimeBetweenCNPsNs = int64(v) * 1000
	case "rate_reduce_monitor_period":
		d.RateReduceMonitorNs = int64(v) * 1000
	case "dce_tcp_g":
		d.DCETCPG = v
	case "dce_tcp_rtt":
		d.DCETCPRTTNs = int64(v) * 1000
	case "initial_alpha_value":
		d.InitialAlpha = float64(v) / 1024
	case "rpg_time_reset":
		d.RPGTimeResetNs = int64(v) * 1000
	case "rpg_byte_reset":
		d.RPGByteReset = int64(v)
	case "rpg_threshold":
		d.RPGThreshold = v
	case "rpg_ai_rate":
		d.RPGAIRateGbps = float64(v) / 1000
	case "rpg_hai_rate":
		d.RPGHAIRateGbps = float64(v) / 1000
	case "rpg_min_dec_fac":
		d.RPGMinDecFac = float64(v)
	case "rpg_min_rate":
		d.RPGMinRateGbps = float64(v) / 1000
	case "clamp_tgt_rate":
		d.ClampTargetRate = v == 1
	}
}
