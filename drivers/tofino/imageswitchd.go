package tofino

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// bf_switchd's start-up output. The reference (hardware-surfaces 3.2) gives
// the command line and errors but not this output; its lines here are those
// of public SDE 9.x run logs (the same in 9.2 through 9.13, where each line
// may carry a "[SWITCHD_MGR] <time> BF_SWITCHD DEBUG - " prefix). labctl
// reads only a few of them, and only by their text, wherever they stand on
// a line: "loading conf_file", "p4_name:", "initialized N devices" (0 when
// adding the device failed, e.g. an artifact could not be loaded) and the
// two "server started" lines.

// SwitchdStart is what bf_switchd prints while it starts.
type SwitchdStart struct {
	InstallDir string
	ConfFile   string
	Family     string // tofino | tofino2
	Programs   []ConfProgram
	Agent      string // agent0 library
	// Error is why adding the device failed; then Devices is 0.
	Error      string
	Devices    int
	Background bool // --background: no driver shell
}

// FormatSwitchdStart prints bf_switchd's start-up lines (the emulated
// switch uses it, so the parser reads what it prints).
func FormatSwitchdStart(w io.Writer, s SwitchdStart) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Install dir: %s (0x55e16e626960)\n", s.InstallDir)
	b.WriteString("bf_switchd: system services initialized\n")
	fmt.Fprintf(&b, "bf_switchd: loading conf_file %s...\n", s.ConfFile)
	b.WriteString("bf_switchd: processing device configuration...\nConfiguration for dev_id 0\n")
	fmt.Fprintf(&b, "  Family        : %s\n", s.Family)
	b.WriteString("bf_switchd: processing P4 configuration...\nP4 profile for dev_id 0\n")
	fmt.Fprintf(&b, "num P4 programs %d\n", len(s.Programs))
	for _, p := range s.Programs {
		fmt.Fprintf(&b, "  p4_name: %s\n", p.Name)
		for _, pl := range p.Pipelines {
			fmt.Fprintf(&b, "  p4_pipeline_name: %s\n    libpd: \n    libpdthrift: \n    context: %s\n    config: %s\n",
				pl.Name, pl.Context, pl.Config)
			b.WriteString("  Pipes in scope [")
			for _, sc := range pl.Scope {
				fmt.Fprintf(&b, "%d ", sc)
			}
			b.WriteString("]\n")
		}
		fmt.Fprintf(&b, "  diag: \n  accton diag: \n  Agent[0]: %s\n  non_default_port_ppgs: 0\n  SAI default initialize: 1 \n", s.Agent)
	}
	fmt.Fprintf(&b, "bf_switchd: library %s loaded\nbf_switchd: agent[0] initialized\nHealth monitor started \n", s.Agent)
	b.WriteString("Operational mode set to ASIC\nInitialized the device types using platforms infra API\n")
	b.WriteString("ASIC detected at PCI /sys/class/bf/bf0/device\nbf_switchd: drivers initialized\n")
	if s.Error != "" {
		fmt.Fprintf(&b, "%s\n", s.Error)
	}
	for d := 0; d < s.Devices; d++ {
		fmt.Fprintf(&b, "bf_switchd: dev_id %d initialized\n", d)
	}
	fmt.Fprintf(&b, "\nbf_switchd: initialized %d devices\nbf_switchd: spawning cli server thread\n", s.Devices)
	if s.Background {
		b.WriteString("bf_switchd: running in background; driver shell is disabled\n")
	} else {
		b.WriteString("bf_switchd: spawning driver shell\n")
	}
	b.WriteString("bf_switchd: server started - listening on port 9999\nbfruntime gRPC server started on 0.0.0.0:50052\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// SwitchdLog is what labctl reads of bf_switchd's output.
type SwitchdLog struct {
	ConfFile string   `json:"conf_file,omitempty"`
	Programs []string `json:"programs,omitempty"` // p4_name lines
	// Devices is the count on "initialized N devices"; -1 before that line.
	Devices int  `json:"devices"`
	Ready   bool `json:"ready"` // the CLI and BF-Runtime servers are up
	// Notes are the lines that tell how loading went: errors and the
	// device count; Tail is the last lines. Both are for messages.
	Notes []string `json:"notes,omitempty"`
	Tail  []string `json:"tail,omitempty"`
}

var (
	confRE    = regexp.MustCompile(`bf_switchd: loading conf_file (.*?)\.\.\.\s*$`)
	p4NameRE  = regexp.MustCompile(`\bp4_name: *(\S+)`)
	devicesRE = regexp.MustCompile(`bf_switchd: initialized (\d+) devices`)
)

const tailLines = 8

// ParseSwitchdLog reads bf_switchd's output (its log file).
func ParseSwitchdLog(out []byte) SwitchdLog {
	l := SwitchdLog{Devices: -1}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := confRE.FindStringSubmatch(line); m != nil {
			l = SwitchdLog{Devices: -1, ConfFile: m[1]} // a restart logged into the same file
		}
		if m := p4NameRE.FindStringSubmatch(line); m != nil {
			l.Programs = append(l.Programs, m[1])
		}
		if m := devicesRE.FindStringSubmatch(line); m != nil {
			l.Devices, _ = strconv.Atoi(m[1])
			l.Notes = append(l.Notes, strings.TrimSpace(line))
		} else if strings.Contains(line, "ERROR") || strings.Contains(line, "failed") {
			l.Notes = append(l.Notes, strings.TrimSpace(line))
		}
		if strings.Contains(line, "bfruntime gRPC server started") || strings.Contains(line, "bf_switchd: server started") {
			l.Ready = true
		}
		if len(l.Notes) > tailLines {
			l.Notes = l.Notes[1:]
		}
		if strings.TrimSpace(line) != "" {
			l.Tail = append(l.Tail, line)
			if len(l.Tail) > tailLines {
				l.Tail = l.Tail[1:]
			}
		}
	}
	return l
}

// Loaded says whether program is loaded on at least one device.
func (l SwitchdLog) Loaded(program string) bool {
	if l.Devices < 1 {
		return false
	}
	for _, p := range l.Programs {
		if p == program {
			return true
		}
	}
	return false
}
