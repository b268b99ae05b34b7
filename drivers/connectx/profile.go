package connectx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/inventory"
)

// Profile is the intended RNIC configuration of the lab's hosts (the RNIC
// profile YAML). Fields left out are not managed.
type Profile struct {
	Trust         string `yaml:"trust,omitempty"`          // pcp | dscp
	PFCPriorities []int  `yaml:"pfc_priorities,omitempty"` // lossless priorities, e.g. [3]
	RoCETOS       *int   `yaml:"roce_tos,omitempty"`       // RDMA-CM ToS byte, e.g. 106 (DSCP 26, ECT(0))
	RoCEMode      int    `yaml:"roce_mode,omitempty"`      // 2 = RoCE v2
	// ECN: notification and reaction point enabled on these priorities
	// (others disabled), and DCQCN/CNP parameters by their sysfs names.
	ECN *ECNProfile `yaml:"ecn,omitempty"`
}

// ECNProfile is the ECN/DCQCN part of an RNIC profile (OFED sysfs).
type ECNProfile struct {
	Priorities []int          `yaml:"priorities"`
	RP         map[string]int `yaml:"rp,omitempty"` // e.g. rpg_time_reset, rpg_ai_rate
	NP         map[string]int `yaml:"np,omitempty"` // e.g. min_time_between_cnps, cnp_dscp
}

// LoadProfile reads a profile file; unknown keys are errors with their line.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Validate checks values against the tools' limits.
func (p *Profile) Validate() error {
	if p.Trust != "" {
		if err := ValidTrust(p.Trust); err != nil {
			return fmt.Errorf("trust: %w", err)
		}
	}
	for _, pr := range p.PFCPriorities {
		if pr < 0 || pr > 7 {
			return fmt.Errorf("pfc_priorities: %d is not a priority (0..7)", pr)
		}
	}
	if p.RoCETOS != nil && (*p.RoCETOS < 0 || *p.RoCETOS > 255) {
		return fmt.Errorf("roce_tos: %d is not a ToS byte (0..255)", *p.RoCETOS)
	}
	if p.RoCEMode != 0 && p.RoCEMode != 1 && p.RoCEMode != 2 {
		return fmt.Errorf("roce_mode: %d (want 1 or 2)", p.RoCEMode)
	}
	if e := p.ECN; e != nil {
		for _, pr := range e.Priorities {
			if pr < 0 || pr > 7 {
				return fmt.Errorf("ecn.priorities: %d is not a priority (0..7)", pr)
			}
		}
		for name, v := range e.RP {
			if _, ok := rpDefaults[name]; !ok || v < 0 {
				return fmt.Errorf("ecn.rp.%s: unknown reaction-point parameter or negative value", name)
			}
		}
		for name, v := range e.NP {
			if _, ok := npDefaults[name]; !ok || v < 0 {
				return fmt.Errorf("ecn.np.%s: unknown notification-point parameter or negative value", name)
			}
		}
	}
	return nil
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
	Host, Device string
	Field        string
	From, To     string
	Command      string
}

// Run executes a command on one host and returns its stdout; an error
// names the host, the command and what it answered (drivers/ssh's Result.Err).
type Run func(ctx context.Context, cmd string) ([]byte, error)

// ReadState reads an RNIC's settings with the tools a host has; the ECN
// sysfs tree (OFED) is read only when withECN.
func ReadState(ctx context.Context, run Run, r inventory.RNIC, withECN bool) (State, error) {
	var st State
	out, err := run(ctx, "mlnx_qos -i "+r.Netdev)
	if err != nil {
		return st, err
	}
	if st.QoS, err = ParseMlnxQoS(string(out)); err != nil {
		return st, err
	}
	if out, err = run(ctx, "cma_roce_tos -d "+r.Device); err != nil {
		return st, err
	}
	if st.RoCETOS, err = ParseRoCETOS(string(out)); err != nil {
		return st, err
	}
	if out, err = run(ctx, "cma_roce_mode -d "+r.Device+" -p 1"); err != nil {
		return st, err
	}
	if st.RoCEMode, err = ParseRoCEMode(string(out)); err != nil || !withECN {
		return st, err
	}
	if out, err = run(ctx, "cat "+strings.Join(ECNFiles(r.Netdev), " ")); err != nil {
		return st, err
	}
	ecn, err := ParseECN(r.Netdev, string(out))
	st.ECN = &ecn
	return st, err
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
		add("trust", st.QoS.Trust, p.Trust, "mlnx_qos -i "+r.Netdev+" --trust "+p.Trust)
	}
	if p.PFCPriorities != nil {
		var want [8]bool
		prios := append([]int(nil), p.PFCPriorities...)
		sort.Ints(prios)
		for _, pr := range prios {
			want[pr] = true
		}
		add("pfc", FormatPFCList(st.QoS.PFCEnabled), FormatPFCList(want), "mlnx_qos -i "+r.Netdev+" --pfc "+FormatPFCList(want))
	}
	if p.RoCETOS != nil {
		add("roce_tos", strconv.Itoa(st.RoCETOS), strconv.Itoa(*p.RoCETOS), fmt.Sprintf("cma_roce_tos -d %s -t %d", r.Device, *p.RoCETOS))
	}
	if p.RoCEMode != 0 {
		add("roce_mode", strconv.Itoa(st.RoCEMode), strconv.Itoa(p.RoCEMode), fmt.Sprintf("cma_roce_mode -d %s -p 1 -m %d", r.Device, p.RoCEMode))
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
			for pr := 0; pr < 8; pr++ {
				file := fmt.Sprintf("%s/%s/enable/%d", ECNDir(r.Netdev), point.name, pr)
				add(fmt.Sprintf("ecn.%s.enable[%d]", point.name, pr), b(point.have[pr]), b(want[pr]), "echo "+b(want[pr])+" > "+file)
			}
		}
		params := func(point string, wantP, haveP map[string]int) {
			for _, name := range sortedKeys(wantP) {
				add("ecn."+point+"."+name, strconv.Itoa(haveP[name]), strconv.Itoa(wantP[name]),
					fmt.Sprintf("echo %d > %s/%s/%s", wantP[name], ECNDir(r.Netdev), point, name))
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
