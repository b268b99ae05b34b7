package perftest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
)

// The layout is perftest v4.5-0.17 (internal version 6.06, what Debian 12
// ships); the strings below are its format strings, including tabs and the
// C printf quirks the real tool shows.

const dashes = "---------------------------------------------------------------------------------------\n"

const serverBanner = "\n************************************\n* Waiting for client to connect... *\n************************************\n"

// QPInfo is one side's queue pair as printed in the connection lines.
type QPInfo struct {
	LID, QPN, PSN, RKey, VAddr uint64
	GID                        net.IP
}

// Session is everything one perftest side prints for a BW test.
type Session struct {
	Tool          string
	Role          Role
	Device        string
	QPs           int
	MTU           int
	GIDIndex      int
	TxDepth       int
	Local, Remote []QPInfo
	Result        BWResult
	Gbits         bool
}

// FormatBW writes a complete BW test session as the real tool prints it.
func FormatBW(w io.Writer, s Session) error {
	verb, ok := tools[s.Tool]
	if !ok {
		return fmt.Errorf("perftest: unknown tool %q", s.Tool)
	}
	b, ok := w.(*bufio.Writer) // a caller formatting many reuses its own
	if !ok {
		b = bufio.NewWriter(w)
	}
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
		writeAddr(b, "local", s.Tool, q)
	}
	for _, q := range s.Remote {
		writeAddr(b, "remote", s.Tool, q)
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

func writeAddr(b *bufio.Writer, side, tool string, q QPInfo) {
	fmt.Fprintf(b, " %s address: LID %s QPN %s PSN %s", side, cAltHex(q.LID, 4), cAltHex(q.QPN, 6), cAltHex(q.PSN, 6))
	switch tool {
	case "ib_read_bw":
		fmt.Fprintf(b, " OUT 0x10 RKey %s VAddr %s", cAltHex(q.RKey, 8), cAltHex(q.VAddr, 16))
	case "ib_write_bw":
		fmt.Fprintf(b, " RKey %s VAddr %s", cAltHex(q.RKey, 8), cAltHex(q.VAddr, 16))
	}
	b.WriteString("\n GID: " + gidDecimal(q.GID) + "\n")
}

// cAltHex is C's "%#0<w>x": the 0x prefix counts in the width, and zero gets
// no prefix at all (so LID 0 prints 0000, the quirk every RoCE user sees).
func cAltHex(v uint64, width int) string {
	if v == 0 {
		return strings.Repeat("0", width)
	}
	return fmt.Sprintf("0x%0*x", max(width-2, 0), v)
}

// gidDecimal prints the 16 GID bytes with %02d: decimal, not hex.
func gidDecimal(ip net.IP) string {
	g := ip.To16()
	if g == nil {
		g = make(net.IP, 16)
	}
	parts := make([]string, 16)
	for i, c := range g {
		parts[i] = fmt.Sprintf("%02d", c)
	}
	return strings.Join(parts, ":")
}

// NewResult is the tool's arithmetic: Gb/s = bytes*iters*8/1e9/s, MB/sec =
// bytes*iters/2^20/s, MsgRate = iters/s/1e6. Peak equals average: labctl
// sources have no per-iteration timing to take a peak from.
func NewResult(bytes, iters int64, seconds float64, gbits bool) BWResult {
	r := BWResult{Bytes: bytes, Iterations: iters}
	if seconds <= 0 {
		return r
	}
	if gbits {
		r.AvgGbps = float64(bytes) * float64(iters) * 8 / 1e9 / seconds
	} else {
		r.AvgGbps = float64(bytes) * float64(iters) / (1 << 20) / seconds
	}
	r.PeakGbps = r.AvgGbps
	r.MsgRateMpps = float64(iters) / seconds / 1e6
	return r
}

// FormatConnectError is what a client prints (stderr) when no server listens.
func FormatConnectError(w io.Writer, addr string, port int) {
	fmt.Fprintf(w, "Couldn't connect to %s:%d\n Unable to init the socket connection\n", addr, port)
}
