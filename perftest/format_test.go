package perftest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"testing"
)

// formatBWPrintf is FormatBW as it was written with fmt's printf verbs,
// the C format strings perftest itself uses: the reference AppendBW must
// print byte for byte.
func formatBWPrintf(w io.Writer, s Session) error {
	verb, ok := tools[s.Tool]
	if !ok {
		return fmt.Errorf("perftest: unknown tool %q", s.Tool)
	}
	b := bufio.NewWriter(w)
	if s.Role == Server {
		b.WriteString(serverBanner)
	}
	b.WriteString(dashes)
	fmt.Fprintf(b, "                    %s BW Test\n", verb)
	fmt.Fprintf(b, " Dual-port       : OFF\t\tDevice         : %s\n", s.Device)
	fmt.Fprintf(b, " Number of qps   : %d\t\tTransport type : IB\n", max(s.QPs, 1))
	b.WriteString(" Connection type : RC\t\tUsing SRQ      : OFF\n")
	b.WriteString(" PCIe relax order: ON\n")
	b.WriteString(" ibv_wr* API     : ON\n")
	if s.Role == Client {
		fmt.Fprintf(b, " TX depth        : %d\n", s.TxDepth)
	}
	b.WriteString(" CQ Moderation   : 100\n")
	fmt.Fprintf(b, " Mtu             : %d[B]\n", s.MTU)
	b.WriteString(" Link type       : Ethernet\n")
	fmt.Fprintf(b, " GID index       : %d\n", s.GIDIndex)
	if s.Tool == "ib_read_bw" {
		b.WriteString(" Outstand reads  : 16\n")
	} else {
		b.WriteString(" Max inline data : 0[B]\n")
	}
	b.WriteString(" rdma_cm QPs\t : OFF\n")
	b.WriteString(" Data ex. method : Ethernet\n")
	b.WriteString(dashes)
	for _, q := range s.Local {
		writeAddrPrintf(b, "local", s.Tool, q)
	}
	for _, q := range s.Remote {
		writeAddrPrintf(b, "remote", s.Tool, q)
	}
	b.WriteString(dashes)
	if s.Gbits {
		b.WriteString(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n")
	} else {
		b.WriteString(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n")
	}
	r := s.Result
	if s.Gbits && r.AvgGbps < 0.1 {
		fmt.Fprintf(b, " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n", r.Bytes, r.Iterations, r.PeakGbps, r.AvgGbps, r.MsgRateMpps)
	} else {
		fmt.Fprintf(b, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.Bytes, r.Iterations, r.PeakGbps, r.AvgGbps, r.MsgRateMpps)
	}
	b.WriteString(dashes)
	return b.Flush()
}

func writeAddrPrintf(b *bufio.Writer, side, tool string, q QPInfo) {
	hex := func(v uint64, width int) string {
		if v == 0 {
			return strings.Repeat("0", width)
		}
		return fmt.Sprintf("0x%0*x", max(width-2, 0), v)
	}
	fmt.Fprintf(b, " %s address: LID %s QPN %s PSN %s", side, hex(q.LID, 4), hex(q.QPN, 6), hex(q.PSN, 6))
	switch tool {
	case "ib_read_bw":
		fmt.Fprintf(b, " OUT 0x10 RKey %s VAddr %s", hex(q.RKey, 8), hex(q.VAddr, 16))
	case "ib_write_bw":
		fmt.Fprintf(b, " RKey %s VAddr %s", hex(q.RKey, 8), hex(q.VAddr, 16))
	}
	g := q.GID.To16()
	if g == nil {
		g = make(net.IP, 16)
	}
	parts := make([]string, 16)
	for i, c := range g {
		parts[i] = fmt.Sprintf("%02d", c)
	}
	b.WriteString("\n GID: " + strings.Join(parts, ":") + "\n")
}

// variedSessions covers what the formats branch on: role, tool, QP count,
// zero and full-width hex fields, IPv4 and IPv6 and missing GIDs, and
// rows on both sides of the 0.1 Gb/s switch, MB/sec, wide and negative
// numbers, NaN and infinities.
func variedSessions() []Session {
	base := synthClient()
	var out []Session
	for _, tool := range []string{"ib_write_bw", "ib_read_bw", "ib_send_bw", "nope"} {
		for _, role := range []Role{Client, Server} {
			s := base
			s.Tool, s.Role = tool, role
			out = append(out, s)
		}
	}
	qps := base
	qps.QPs, qps.Device, qps.GIDIndex, qps.TxDepth, qps.MTU = 0, "rocep1s0f1", 13, 4096, 1024
	qps.Local = []QPInfo{{}, {LID: 1, QPN: 0xffffff, PSN: 0x1000000, RKey: math.MaxUint64, VAddr: 0x1, GID: net.ParseIP("fe80::1")}}
	qps.Remote = []QPInfo{{GID: net.IP{1, 2, 3}}, {LID: 0xabcd, GID: net.ParseIP("255.0.99.100")}}
	out = append(out, qps)
	for _, r := range []BWResult{
		{}, {Bytes: 1, Iterations: 5, PeakGbps: 0.0999999, AvgGbps: 0.0999999, MsgRateMpps: 1e-9},
		{Bytes: 12345678, Iterations: 12345678901, PeakGbps: 0.1, AvgGbps: 0.1, MsgRateMpps: 123456.7},
		{Bytes: -3, Iterations: -40, PeakGbps: -1.005, AvgGbps: -0.5, MsgRateMpps: math.Copysign(0, -1)},
		{Bytes: 65536, Iterations: 5000, PeakGbps: math.NaN(), AvgGbps: math.Inf(1), MsgRateMpps: math.Inf(-1)},
		{Bytes: 65536, Iterations: 5000, PeakGbps: 1e300, AvgGbps: 97.125, MsgRateMpps: 2.5e-7},
		NewResult(4096, 77, 3.3e-6, true), NewResult(4096, 77, 3.3e-6, false), NewResult(1<<20, 1, 1, true),
	} {
		for _, gbits := range []bool{true, false} {
			s := base
			s.Result, s.Gbits = r, gbits
			out = append(out, s)
		}
	}
	return out
}

// TestAppendBWMatchesPrintf: the appending formatter prints what the
// printf formats print, byte for byte, on varied sessions.
func TestAppendBWMatchesPrintf(t *testing.T) {
	t.Parallel()
	for i, s := range variedSessions() {
		var want bytes.Buffer
		wantErr := formatBWPrintf(&want, s)
		got, err := AppendBW([]byte("kept:"), s)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("session %d: error %v, printf's %v", i, err, wantErr)
		}
		if string(got) != "kept:"+want.String() {
			t.Errorf("session %d:\n got %q\nwant %q", i, got, "kept:"+want.String())
		}
	}
}

// FuzzAppendBW: for any numbers, device name and addresses, AppendBW
// prints what the printf formats print.
func FuzzAppendBW(f *testing.F) {
	f.Add("ib_write_bw", true, true, "mlx5_0", 3, 128, int64(65536), int64(5000), 97.52, 0.185921, uint64(0x108), uint64(0x7f1c2b5a0000), []byte{192, 168, 1, 10})
	f.Add("ib_read_bw", false, false, "", -1, 0, int64(0), int64(0), 0.05, 0.0, uint64(0), uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, tool string, client, gbits bool, dev string, gid, depth int, bytes_, iters int64, bw, rate float64, qpn, vaddr uint64, ip []byte) {
		s := Session{Tool: tool, Role: Server, Device: dev, QPs: depth % 3, MTU: 4096, GIDIndex: gid, TxDepth: depth, Gbits: gbits,
			Local:  []QPInfo{{LID: qpn >> 48, QPN: qpn, PSN: qpn & 0xffffff, RKey: vaddr >> 16, VAddr: vaddr, GID: net.IP(ip)}},
			Remote: []QPInfo{{QPN: vaddr, GID: net.IP(ip).To16()}},
			Result: BWResult{Bytes: bytes_, Iterations: iters, PeakGbps: bw * 2, AvgGbps: bw, MsgRateMpps: rate}}
		if client {
			s.Role = Client
		}
		var want bytes.Buffer
		wantErr := formatBWPrintf(&want, s)
		got, err := AppendBW(nil, s)
		if (err != nil) != (wantErr != nil) || string(got) != want.String() {
			t.Fatalf("got %q (%v)\nwant %q (%v)", got, err, want.String(), wantErr)
		}
	})
}

func BenchmarkAppendBW(b *testing.B) {
	s := synthClient()
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = AppendBW(buf[:0], s)
		}
	})
	b.Run("printf", func(b *testing.B) { // the formatter before AppendBW
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			_ = formatBWPrintf(&buf, s)
		}
	})
}
