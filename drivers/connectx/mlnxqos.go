package connectx

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// QoS is what `mlnx_qos -i <netdev>` shows.
type QoS struct {
	DCBXMode      string // "OS controlled" | "Firmware controlled"
	Trust         string // pcp | dscp
	DSCP2Prio     [64]int
	RxBufferSizes [8]int
	MaxBufferSize int // 0: the line has no max_buffer_size (older builds)
	CableLen      int
	PFCEnabled    [8]bool
	PrioBuffer    [8]int
	TCs           []TC
}

// TC is one traffic class.
type TC struct {
	TC         int
	RateLimit  string // "unlimited" or "%.1f Gbps"
	TSA        string // vendor | strict | ets
	BW         int    // percent, ets only
	Priorities []int
}

// DefaultQoS is a ConnectX port out of the box: trust pcp, no PFC, the
// firmware's dscp>>3 map, prio 1 on tc0 and prio 0 on tc1, tsa vendor.
func DefaultQoS() QoS {
	q := QoS{DCBXMode: "OS controlled", Trust: "pcp", RxBufferSizes: [8]int{130944, 130944}, MaxBufferSize: 262016, CableLen: 7}
	for d := range q.DSCP2Prio {
		q.DSCP2Prio[d] = d >> 3
	}
	for tc := 0; tc < 8; tc++ {
		prio := tc
		switch tc {
		case 0:
			prio = 1
		case 1:
			prio = 0
		}
		q.TCs = append(q.TCs, TC{TC: tc, RateLimit: "unlimited", TSA: "vendor", Priorities: []int{prio}})
	}
	return q
}

// FormatMlnxQoS prints the show output of mlnx-tools' mlnx_qos (HEAD
// layout: the enabled and buffer rows end with three spaces).
func FormatMlnxQoS(w io.Writer, q QoS) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "DCBX mode: %s\n", q.DCBXMode)
	fmt.Fprintf(b, "Priority trust state: %s\n", q.Trust)
	if q.Trust == "dscp" {
		b.WriteString("dscp2prio mapping:\n")
		for p := 0; p < 8; p++ {
			var ds []int
			for d := 63; d >= 0; d-- {
				if q.DSCP2Prio[d] == p {
					ds = append(ds, d)
				}
			}
			for i := 0; i < len(ds); i += 8 {
				fmt.Fprintf(b, "\tprio:%d dscp:", p)
				for _, d := range ds[i:min(i+8, len(ds))] {
					fmt.Fprintf(b, "%02d,", d)
				}
				b.WriteString("\n")
			}
		}
	}
	sizes := make([]string, 8)
	for i, s := range q.RxBufferSizes {
		sizes[i] = strconv.Itoa(s)
	}
	fmt.Fprintf(b, "Receive buffer size (bytes): %s,", strings.Join(sizes, ","))
	if q.MaxBufferSize > 0 {
		fmt.Fprintf(b, "max_buffer_size=%d", q.MaxBufferSize)
	}
	fmt.Fprintf(b, "\nCable len: %d\nPFC configuration:\n", q.CableLen)
	b.WriteString("\tpriority    0   1   2   3   4   5   6   7\n\tenabled     ")
	for _, e := range q.PFCEnabled {
		v := 0
		if e {
			v = 1
		}
		fmt.Fprintf(b, "%d   ", v)
	}
	b.WriteString("\n\tbuffer      ")
	for _, v := range q.PrioBuffer {
		fmt.Fprintf(b, "%d   ", v)
	}
	b.WriteString("\n")
	for _, tc := range q.TCs {
		fmt.Fprintf(b, "tc: %d ratelimit: %s, tsa: %s", tc.TC, tc.RateLimit, tc.TSA)
		if tc.TSA == "ets" {
			fmt.Fprintf(b, ", bw: %d%%", tc.BW)
		}
		b.WriteString("\n")
		for _, p := range tc.Priorities {
			fmt.Fprintf(b, "\t priority:  %d\n", p)
		}
	}
	return b.Flush()
}

// ParseMlnxQoS reads mlnx_qos show output. It tolerates the version drift
// seen in real samples: a "default priority:" line, no max_buffer_size, TCs
// listed in priority order, tabs expanded to spaces.
func ParseMlnxQoS(out string) (QoS, error) {
	q := QoS{}
	for d := range q.DSCP2Prio {
		q.DSCP2Prio[d] = d >> 3
	}
	var tc *TC
	seenPFC := false
	for n, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		bad := func(what string) error { return fmt.Errorf("mlnx_qos: line %d: %s: %q", n+1, what, line) }
		switch {
		case t == "" || t == "PFC configuration:" || t == "dscp2prio mapping:" || strings.HasPrefix(t, "default priority:") || strings.HasPrefix(t, "*"):
		case strings.HasPrefix(t, "DCBX mode:"):
			q.DCBXMode = strings.TrimSpace(strings.TrimPrefix(t, "DCBX mode:"))
		case strings.HasPrefix(t, "Priority trust state:"):
			q.Trust = strings.TrimSpace(strings.TrimPrefix(t, "Priority trust state:"))
		case strings.HasPrefix(t, "prio:"):
			var p int
			rest, _ := strings.CutPrefix(t, "prio:")
			ps, ds, ok := strings.Cut(rest, " dscp:")
			p, err := strconv.Atoi(ps)
			if !ok || err != nil || p < 0 || p > 7 {
				return q, bad("bad dscp2prio line")
			}
			for _, d := range strings.Split(strings.TrimSuffix(ds, ","), ",") {
				v, err := strconv.Atoi(d)
				if err != nil || v < 0 || v > 63 {
					return q, bad("bad DSCP")
				}
				q.DSCP2Prio[v] = p
			}
		case strings.HasPrefix(t, "Receive buffer size (bytes):"):
			for i, f := range strings.Split(strings.TrimSpace(strings.TrimPrefix(t, "Receive buffer size (bytes):")), ",") {
				if v, ok := strings.CutPrefix(f, "max_buffer_size="); ok {
					q.MaxBufferSize, _ = strconv.Atoi(v)
				} else if i < 8 && f != "" {
					q.RxBufferSizes[i], _ = strconv.Atoi(f)
				}
			}
		case strings.HasPrefix(t, "Cable len:"):
			q.CableLen, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(t, "Cable len:")))
		case strings.HasPrefix(t, "priority ") && !seenPFC:
			seenPFC = true
		case strings.HasPrefix(t, "enabled"), strings.HasPrefix(t, "buffer"):
			f := strings.Fields(t)
			if len(f) != 9 {
				return q, bad("want 8 values")
			}
			for i, v := range f[1:] {
				x, err := strconv.Atoi(v)
				if err != nil {
					return q, bad("bad value")
				}
				if f[0] == "enabled" {
					q.PFCEnabled[i] = x == 1
				} else {
					q.PrioBuffer[i] = x
				}
			}
		case strings.HasPrefix(t, "tc:"):
			var c TC
			head, tsa, ok := strings.Cut(t, ", tsa: ")
			if !ok {
				return q, bad("bad tc line")
			}
			f := strings.Fields(head) // tc: N ratelimit: X [Gbps]
			if len(f) < 4 {
				return q, bad("bad tc line")
			}
			c.TC, _ = strconv.Atoi(f[1])
			c.RateLimit = strings.Join(f[3:], " ")
			c.TSA, _, _ = strings.Cut(tsa, ",")
			if _, bw, ok := strings.Cut(tsa, "bw: "); ok {
				c.BW, _ = strconv.Atoi(strings.TrimSuffix(bw, "%"))
			}
			q.TCs = append(q.TCs, c)
			tc = &q.TCs[len(q.TCs)-1]
		case strings.HasPrefix(t, "priority:"):
			if tc == nil {
				return q, bad("priority before any tc")
			}
			p, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(t, "priority:")))
			if err != nil {
				return q, bad("bad priority")
			}
			tc.Priorities = append(tc.Priorities, p)
		default:
			return q, bad("unknown line")
		}
	}
	if q.Trust == "" {
		return q, fmt.Errorf("mlnx_qos: no \"Priority trust state\" line")
	}
	return q, nil
}
