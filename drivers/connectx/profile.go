package connectx

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/inventory"
)

// Profile is the intended RNIC configuration of the lab's hosts (the RNIC
// profile YAML). Fields left out are not managed.
type Profile struct {
	Trust         string `yaml:"trust,omitempty"`          // pcp | dscp
	PFCPriorities []int  `yaml:"pfc_priorities,omitempty"` // lossless priorities, e.g. [3]
	RoCETOS       *int   `yaml:"roce_tos,omitempty"`       // RDMA-CM ToS byte, e.g. 106 (DSCP 26, ECT(0))
	RoCEMode      int    `yaml:"roce_mode,omitempty"`      // 2 = RoCE v2
	// DSCP2Prio maps DSCPs to priorities (mlnx_qos --dscp2prio; trust dscp).
	DSCP2Prio map[int]int `yaml:"dscp2prio,omitempty"`
	// PrioBuffer maps each priority to a receive buffer, BufferSize sizes
	// the 8 buffers in bytes (mlnx_qos --prio2buffer, --buffer_size).
	PrioBuffer []int `yaml:"prio2buffer,omitempty"`
	BufferSize []int `yaml:"buffer_size,omitempty"`
	// CNPs the notification point sends: DSCP and 802.1p priority.
	CNPDSCP     *int `yaml:"cnp_dscp,omitempty"`
	CNPPriority *int `yaml:"cnp_priority,omitempty"`
	// CNPGeneration is when the notification point sends a CNP:
	// CNPPerPacket for every ECN-marked packet (the papers' ns-3 code
	// bases), CNPMinInterval at most one per QP per
	// min_time_between_cnps (ConnectX; the firmware default, 4 us, unless
	// ecn.np sets it). Both set min_time_between_cnps, the one knob the
	// RNIC has: per_packet is 0. Empty: not managed.
	CNPGeneration string `yaml:"cnp_generation,omitempty"`
	// ECN: notification and reaction point enabled on these priorities
	// (others disabled; OFED only), and DCQCN parameters by their OFED
	// sysfs names (inbox hosts get the same values in debugfs).
	ECN *ECNProfile `yaml:"ecn,omitempty"`
	// HostLB names a host-side load-balancing module (HF²T, ...) and
	// HostLBParams its parameters: what the host's NIC or driver does to
	// its QPs' packets beyond pacing. The fabric twin runs it on every
	// emulated host; real ConnectX firmware runs none of them, so a plan
	// that gives such a profile to real hosts is refused (HostLBError).
	HostLB       string            `yaml:"host_lb,omitempty"`
	HostLBParams map[string]string `yaml:"host_lb_params,omitempty"`
}

// HostLBError says why the profile cannot go to real RNICs: its host_lb
// names a host module, which stock ConnectX firmware cannot run (labctl
// applies none to real hosts; the fabric twin runs them). Nil without one.
func (p *Profile) HostLBError() error {
	if p.HostLB == "" {
		return nil
	}
	return fmt.Errorf("host_lb %s: real ConnectX firmware cannot run host module %s (it needs a programmable NIC; labctl applies host modules only in the fabric twin of an emulated lab)", p.HostLB, p.HostLB)
}

// ECNProfile is the ECN/DCQCN part of an RNIC profile.
type ECNProfile struct {
	Priorities []int          `yaml:"priorities"`
	RP         map[string]int `yaml:"rp,omitempty"` // e.g. rpg_time_reset, rpg_ai_rate
	NP         map[string]int `yaml:"np,omitempty"` // e.g. min_time_between_cnps
}

// CNP generation modes (Profile.CNPGeneration).
const (
	CNPPerPacket   = "per_packet"
	CNPMinInterval = "min_interval"
)

// cnpGap is the min_time_between_cnps CNPGeneration sets, unless ecn.np
// sets it itself (which problems checks against it).
func (p *Profile) cnpGap() (int, bool) {
	if p.ECN != nil {
		if _, given := p.ECN.NP["min_time_between_cnps"]; given {
			return 0, false
		}
	}
	switch p.CNPGeneration {
	case CNPPerPacket:
		return 0, true
	case CNPMinInterval:
		return npDefaults["min_time_between_cnps"], true
	}
	return 0, false
}

// LoadProfile reads a profile file; every problem is reported as
// file:line: field: message.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(b, path)
}

// ParseProfile decodes and checks a profile.
func ParseProfile(data []byte, file string) (*Profile, error) {
	var p Profile
	ix, err := yamlpos.Decode(data, file, &p)
	if err != nil {
		return nil, err
	}
	var ps yamlpos.Problems
	for _, pb := range p.problems() {
		ix.Add(&ps, pb[0], "%s", pb[1])
	}
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return &p, nil
}

// problems lists (field path, message) pairs.
func (p *Profile) problems() [][2]string {
	var out [][2]string
	add := func(field, format string, args ...any) {
		out = append(out, [2]string{field, fmt.Sprintf(format, args...)})
	}
	if len(p.HostLBParams) > 0 && p.HostLB == "" {
		add("host_lb_params", "parameters without host_lb: name the host module they are for")
	}
	if p.Trust != "" && ValidTrust(p.Trust) != nil {
		// mlnx_qos's own message ("Invalid trust state command") says
		// neither what is wanted nor what is allowed.
		add("trust", "%q: want pcp (classify by the VLAN tag's 802.1p priority) or dscp (by the IP header's DSCP; needed for dscp2prio)", p.Trust)
	}
	prio := func(field string, v int) {
		if v < 0 || v > 7 {
			add(field, "%d is not a priority (0..7)", v)
		}
	}
	for i, pr := range p.PFCPriorities {
		prio(fmt.Sprintf("pfc_priorities[%d]", i), pr)
	}
	if p.RoCETOS != nil && (*p.RoCETOS < 0 || *p.RoCETOS > 255) {
		add("roce_tos", "%d is not a ToS byte (0..255)", *p.RoCETOS)
	}
	if p.RoCEMode != 0 && p.RoCEMode != 1 && p.RoCEMode != 2 {
		add("roce_mode", "%d (want 1 or 2)", p.RoCEMode)
	}
	if len(p.DSCP2Prio) > 0 && p.Trust != "dscp" {
		add("dscp2prio", "needs trust: dscp (mlnx_qos shows and uses the map only in dscp trust)")
	}
	for _, d := range slices.Sorted(maps.Keys(p.DSCP2Prio)) {
		if d < 0 || d > 63 {
			add(fmt.Sprintf("dscp2prio.%d", d), "%d is not a DSCP (0..63)", d)
		}
		prio(fmt.Sprintf("dscp2prio.%d", d), p.DSCP2Prio[d])
	}
	if p.PrioBuffer != nil {
		if len(p.PrioBuffer) != 8 {
			add("prio2buffer", "want 8 buffers, one per priority")
		}
		for i, b := range p.PrioBuffer {
			if b < 0 || b > 7 {
				add(fmt.Sprintf("prio2buffer[%d]", i), "%d is not a buffer (0..7)", b)
			}
		}
	}
	if p.BufferSize != nil {
		if len(p.BufferSize) != 8 {
			add("buffer_size", "want 8 sizes in bytes")
		}
		for i, b := range p.BufferSize {
			if b < 0 {
				add(fmt.Sprintf("buffer_size[%d]", i), "%d is negative", b)
			}
		}
	}
	if p.CNPDSCP != nil && (*p.CNPDSCP < 0 || *p.CNPDSCP > 63) {
		add("cnp_dscp", "%d is not a DSCP (0..63)", *p.CNPDSCP)
	}
	if p.CNPPriority != nil {
		prio("cnp_priority", *p.CNPPriority)
	}
	var gap int
	given := false
	if p.ECN != nil {
		gap, given = p.ECN.NP["min_time_between_cnps"]
	}
	switch p.CNPGeneration {
	case "":
	case CNPPerPacket:
		if given && gap != 0 {
			add("cnp_generation", "per_packet means ecn.np.min_time_between_cnps 0, not %d", gap)
		}
	case CNPMinInterval:
		if given && gap == 0 {
			add("cnp_generation", "min_interval needs ecn.np.min_time_between_cnps above 0 (0 is per_packet)")
		}
	default:
		add("cnp_generation", "%q: want per_packet (a CNP for every ECN-marked packet, as the papers' ns-3 code bases) or min_interval (at most one per QP per min_time_between_cnps, ConnectX)", p.CNPGeneration)
	}
	if e := p.ECN; e != nil {
		for i, pr := range e.Priorities {
			prio(fmt.Sprintf("ecn.priorities[%d]", i), pr)
		}
		for _, name := range slices.Sorted(maps.Keys(e.RP)) {
			if _, ok := rpDefaults[name]; !ok || e.RP[name] < 0 {
				add("ecn.rp."+name, "unknown reaction-point parameter or negative value")
			}
		}
		for _, name := range slices.Sorted(maps.Keys(e.NP)) {
			if _, ok := npDefaults[name]; !ok || e.NP[name] < 0 {
				add("ecn.np."+name, "unknown notification-point parameter or negative value")
			}
		}
		if _, ok := e.NP["cnp_dscp"]; ok && p.CNPDSCP != nil {
			add("ecn.np.cnp_dscp", "given twice: use cnp_dscp")
		}
		if _, ok := e.NP["cnp_802p_prio"]; ok && p.CNPPriority != nil {
			add("ecn.np.cnp_802p_prio", "given twice: use cnp_priority")
		}
	}
	return out
}

// NeedsECN says whether the profile manages anything of the ECN/DCQCN
// files (so ReadState must read them).
func (p *Profile) NeedsECN() bool {
	return p.ECN != nil || p.CNPDSCP != nil || p.CNPPriority != nil || p.CNPGeneration != ""
}

// State is an RNIC's configuration as read back from the host.
type State struct {
	QoS      QoS
	RoCETOS  int
	RoCEMode int
	ECN      *ECNState // nil: not read (the profile manages no ECN)
}

// Change is one difference between intent and a host, with the command
// that makes it.
type Change struct {
	Host    string `json:"host"`
	Device  string `json:"device"`
	Field   string `json:"field"`
	From    string `json:"from"`
	To      string `json:"to"`
	Command string `json:"command"`
}

// Run executes a command on one host and returns its stdout; an error
// names the host, the command and what it answered (drivers/ssh's Result.Err).
type Run func(ctx context.Context, cmd string) ([]byte, error)

// ReadState reads an RNIC's settings with the tools a host has. With
// withECN it also probes the driver stack (`test -d /sys/class/net/<if>/ecn`)
// and reads the ECN/DCQCN files: the OFED sysfs tree, or the upstream
// driver's debugfs cc_params of the RNIC's PCI function.
func ReadState(ctx context.Context, run Run, r inventory.RNIC, withECN bool) (State, error) {
	var st State
	out, err := run(ctx, "mlnx_qos -i "+sshdrv.Quote(r.Netdev))
	if err != nil {
		return st, err
	}
	if st.QoS, err = ParseMlnxQoS(string(out)); err != nil {
		return st, err
	}
	if out, err = run(ctx, "cma_roce_tos -d "+sshdrv.Quote(r.Device)); err != nil {
		return st, err
	}
	if st.RoCETOS, err = ParseRoCETOS(string(out)); err != nil {
		return st, err
	}
	if out, err = run(ctx, "cma_roce_mode -d "+sshdrv.Quote(r.Device)+" -p 1"); err != nil {
		return st, err
	}
	if st.RoCEMode, err = ParseRoCEMode(string(out)); err != nil || !withECN {
		return st, err
	}
	ofed, err := probe(ctx, run, "test -d "+sshdrv.Quote(ECNDir(r.Netdev)))
	if err != nil {
		return st, err
	}
	var ecn ECNState
	if ofed {
		if out, err = run(ctx, catCommand(ECNFiles(r.Netdev))); err != nil {
			return st, err
		}
		ecn, err = ParseECN(r.Netdev, string(out))
	} else {
		if out, err = run(ctx, "readlink "+sshdrv.Quote("/sys/class/net/"+r.Netdev+"/device")); err != nil {
			return st, err
		}
		pci, err := ParsePCILink(string(out))
		if err != nil {
			return st, err
		}
		// which files exist depends on the kernel: cat says (parseCat)
		dir := DebugfsDir(pci)
		out, stderr, err := catPresent(ctx, run, DebugfsPaths(dir))
		if err != nil {
			return st, err
		}
		// err is this block's own (declared with stderr above): return it
		// here, or a debugfs parse error would be lost.
		if ecn, err = ParseDebugfs(dir, out, stderr); err != nil {
			return st, err
		}
	}
	st.ECN = &ecn
	return st, err
}

// probe runs a test command: exit 0 is true, exit 1 false, anything else
// an error.
func probe(ctx context.Context, run Run, cmd string) (bool, error) {
	_, err := run(ctx, cmd)
	var ce *sshdrv.CommandError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ce) && ce.ExitStatus == 1:
		return false, nil
	}
	return false, err
}

// Notes are what a profile asks of a host that its driver stack cannot do
// (the plan shows them; they are not changes).
func (p *Profile) Notes(st State) []string {
	var out []string
	if p.ECN != nil && st.ECN != nil && !st.ECN.PerPriority() {
		out = append(out, "upstream mlx5 driver: no per-priority ECN enable (DCQCN runs on the firmware's ROCE_CC_PRIO_MASK priorities, default all); ecn.priorities is not applied")
	}
	if st.ECN == nil {
		return out
	}
	for _, m := range p.managedParams() {
		if !st.ECN.Has(m.point, m.name) {
			out = append(out, fmt.Sprintf("older kernel: %s has no %s file; %s is not applied",
				st.ECN.Dir, path.Base(st.ECN.ParamFile(m.point, m.name)), m.field))
		}
	}
	return out
}

// param is an ECN/DCQCN parameter a profile sets, and the profile field
// that sets it.
type param struct{ point, name, field string }

// managedParams lists the parameters the profile sets, in Diff's order.
func (p *Profile) managedParams() []param {
	var out []param
	if p.CNPDSCP != nil {
		out = append(out, param{"roce_np", "cnp_dscp", "cnp_dscp"})
	}
	if p.CNPPriority != nil {
		out = append(out, param{"roce_np", "cnp_802p_prio", "cnp_priority"})
	}
	if _, ok := p.cnpGap(); ok {
		out = append(out, param{"roce_np", "min_time_between_cnps", "cnp_generation"})
	}
	if e := p.ECN; e != nil {
		for _, n := range slices.Sorted(maps.Keys(e.NP)) {
			out = append(out, param{"roce_np", n, "ecn.np." + n})
		}
		for _, n := range slices.Sorted(maps.Keys(e.RP)) {
			out = append(out, param{"roce_rp", n, "ecn.rp." + n})
		}
	}
	return out
}

// Diff lists what differs between the profile and a host's state, in a
// stable order; an empty list means the host is as intended.
func (p *Profile) Diff(host string, r inventory.RNIC, st State) []Change {
	var ch []Change
	add := func(field, from, to, cmd string) {
		if from != to {
			ch = append(ch, Change{Host: host, Device: r.Device, Field: field, From: from, To: to, Command: cmd})
		}
	}
	if p.Trust != "" {
		add("trust", st.QoS.Trust, p.Trust, "mlnx_qos -i "+sshdrv.Quote(r.Netdev)+" --trust "+p.Trust)
	}
	if p.PFCPriorities != nil {
		var want [8]bool
		prios := append([]int(nil), p.PFCPriorities...)
		sort.Ints(prios)
		for _, pr := range prios {
			want[pr] = true
		}
		add("pfc", FormatPFCList(st.QoS.PFCEnabled), FormatPFCList(want), "mlnx_qos -i "+sshdrv.Quote(r.Netdev)+" --pfc "+FormatPFCList(want))
	}
	if p.RoCETOS != nil {
		add("roce_tos", strconv.Itoa(st.RoCETOS), strconv.Itoa(*p.RoCETOS), fmt.Sprintf("cma_roce_tos -d %s -t %d", sshdrv.Quote(r.Device), *p.RoCETOS))
	}
	if p.RoCEMode != 0 {
		add("roce_mode", strconv.Itoa(st.RoCEMode), strconv.Itoa(p.RoCEMode), fmt.Sprintf("cma_roce_mode -d %s -p 1 -m %d", sshdrv.Quote(r.Device), p.RoCEMode))
	}
	mlnx := "mlnx_qos -i " + sshdrv.Quote(r.Netdev)
	for _, d := range slices.Sorted(maps.Keys(p.DSCP2Prio)) {
		v := p.DSCP2Prio[d]
		add(fmt.Sprintf("dscp2prio[%d]", d), strconv.Itoa(st.QoS.DSCP2Prio[d]), strconv.Itoa(v), fmt.Sprintf("%s --dscp2prio set,%d,%d", mlnx, d, v))
	}
	if p.PrioBuffer != nil {
		want := FormatIntList(p.PrioBuffer)
		add("prio2buffer", FormatIntList(st.QoS.PrioBuffer[:]), want, mlnx+" --prio2buffer "+want)
	}
	if p.BufferSize != nil {
		want := FormatIntList(p.BufferSize)
		add("buffer_size", FormatIntList(st.QoS.RxBufferSizes[:]), want, mlnx+" --buffer_size "+want)
	}
	if e := st.ECN; e != nil {
		echo := func(field, from string, v int, point, name string) {
			if e.Has(point, name) { // else a note says it cannot be set
				add(field, from, strconv.Itoa(v), fmt.Sprintf("echo %d > %s", v, sshdrv.Quote(e.ParamFile(point, name))))
			}
		}
		if p.CNPDSCP != nil {
			echo("cnp_dscp", strconv.Itoa(e.NP["cnp_dscp"]), *p.CNPDSCP, "roce_np", "cnp_dscp")
		}
		if p.CNPPriority != nil {
			from := strconv.Itoa(e.NP["cnp_802p_prio"])
			if e.CNPPrioMode == 1 {
				from = "request" // the CNP takes the priority of the packet it answers
			}
			echo("cnp_priority", from, *p.CNPPriority, "roce_np", "cnp_802p_prio")
		}
		if gap, ok := p.cnpGap(); ok {
			echo("cnp_generation", strconv.Itoa(e.NP["min_time_between_cnps"]), gap, "roce_np", "min_time_between_cnps")
		}
	}
	if e := p.ECN; e != nil && st.ECN != nil {
		var want [8]bool
		for _, pr := range e.Priorities {
			want[pr] = true
		}
		b := func(v bool) string {
			if v {
				return "1"
			}
			return "0"
		}
		for _, point := range []struct {
			name string
			have [8]bool
		}{{"roce_np", st.ECN.NPEnabled}, {"roce_rp", st.ECN.RPEnabled}} {
			for pr := 0; pr < 8 && st.ECN.PerPriority(); pr++ {
				file := fmt.Sprintf("%s/%s/enable/%d", ECNDir(r.Netdev), point.name, pr)
				add(fmt.Sprintf("ecn.%s.enable[%d]", point.name, pr), b(point.have[pr]), b(want[pr]), "echo "+b(want[pr])+" > "+sshdrv.Quote(file))
			}
		}
		params := func(point string, wantP, haveP map[string]int) {
			for _, name := range slices.Sorted(maps.Keys(wantP)) {
				if st.ECN.Has(point, name) {
					add("ecn."+point+"."+name, strconv.Itoa(haveP[name]), strconv.Itoa(wantP[name]),
						fmt.Sprintf("echo %d > %s", wantP[name], sshdrv.Quote(st.ECN.ParamFile(point, name))))
				}
			}
		}
		params("roce_np", e.NP, st.ECN.NP)
		params("roce_rp", e.RP, st.ECN.RP)
	}
	return ch
}

// Apply makes the changes in order and stops at the first failure, which
// it reports with the changes already made, so nothing is half-applied
// without the caller knowing.
func Apply(ctx context.Context, run Run, changes []Change) (applied []Change, err error) {
	for _, c := range changes {
		if _, err := run(ctx, c.Command); err != nil {
			return applied, fmt.Errorf("host %s: set %s %s -> %s: %w", c.Host, c.Field, c.From, c.To, err)
		}
		applied = append(applied, c)
	}
	return applied, nil
}
