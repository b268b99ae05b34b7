package perftest

import (
	"fmt"
	"io"
	"math/bits"
	"net"
	"strconv"
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
	b, err := AppendBW(nil, s)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendBW appends a complete BW test session, as the real tool prints
// it, to dst: FormatBW into a caller's buffer. An emulated point renders
// hundreds of thousands of these, so it appends bytes (strconv, no fmt)
// to one buffer a caller reuses; the output is what C's printf formats
// give (padBW, appendCAltHex, appendGID say how).
func AppendBW(dst []byte, s Session) ([]byte, error) {
	verb, ok := tools[s.Tool]
	if !ok {
		return dst, fmt.Errorf("perftest: unknown tool %q", s.Tool)
	}
	b := dst
	if s.Role == Server {
		b = append(b, serverBanner...)
	}
	b = append(b, dashes...)
	b = append(b, "                    "...)
	b = append(b, verb...)
	b = append(b, " BW Test\n Dual-port       : OFF\t\tDevice         : "...)
	b = append(b, s.Device...)
	b = append(b, "\n Number of qps   : "...)
	b = strconv.AppendInt(b, int64(max(s.QPs, 1)), 10)
	b = append(b, "\t\tTransport type : IB\n"...)
	b = append(b, " Connection type : RC\t\tUsing SRQ      : OFF\n"...)
	b = append(b, " PCIe relax order: ON\n"...)
	b = append(b, " ibv_wr* API     : ON\n"...)
	if s.Role == Client {
		b = append(b, " TX depth        : "...)
		b = strconv.AppendInt(b, int64(s.TxDepth), 10)
		b = append(b, '\n')
	}
	b = append(b, " CQ Moderation   : 100\n"...)
	b = append(b, " Mtu             : "...)
	b = strconv.AppendInt(b, int64(s.MTU), 10)
	b = append(b, "[B]\n Link type       : Ethernet\n GID index       : "...)
	b = strconv.AppendInt(b, int64(s.GIDIndex), 10)
	b = append(b, '\n')
	if s.Tool == "ib_read_bw" {
		b = append(b, " Outstand reads  : 16\n"...)
	} else {
		b = append(b, " Max inline data : 0[B]\n"...)
	}
	b = append(b, " rdma_cm QPs\t : OFF\n"...)
	b = append(b, " Data ex. method : Ethernet\n"...)
	b = append(b, dashes...)
	for _, q := range s.Local {
		b = appendAddr(b, "local", s.Tool, q)
	}
	for _, q := range s.Remote {
		b = appendAddr(b, "remote", s.Tool, q)
	}
	b = append(b, dashes...)
	if s.Gbits {
		b = append(b, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"...)
	} else {
		b = append(b, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"...)
	}
	r := s.Result
	// The row's printf formats: " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n"
	// below 0.1 Gb/s, else " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n".
	small := s.Gbits && r.AvgGbps < 0.1
	b = append(b, ' ')
	b = padBW(b, strconv.AppendInt(b, r.Bytes, 10), 7)
	b = append(b, "    "...)
	prec := 2
	if small {
		b = strconv.AppendInt(b, r.Iterations, 10)
		prec = 6
	} else {
		b = padBW(b, strconv.AppendInt(b, r.Iterations, 10), 10)
	}
	b = append(b, "           "[:11-4*btoi(!small)]...) // 11 spaces after %d, 7 after %-10d
	b = padBW(b, strconv.AppendFloat(b, r.PeakGbps, 'f', prec, 64), 7)
	b = append(b, "            "...)
	b = padBW(b, strconv.AppendFloat(b, r.AvgGbps, 'f', prec, 64), 7)
	if small {
		b = append(b, "            "...)
	} else {
		b = append(b, "\t\t   "...)
	}
	b = padBW(b, strconv.AppendFloat(b, r.MsgRateMpps, 'f', 6, 64), 7)
	b = append(b, '\n')
	b = append(b, dashes...)
	return b, nil
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// padBW left-justifies the field just appended to b (b grew into grown)
// to width, as printf's %-<width> does: spaces after it.
func padBW(b, grown []byte, width int) []byte {
	for n := len(grown) - len(b); n < width; n++ {
		grown = append(grown, ' ')
	}
	return grown
}

// appendAddr is one queue pair's connection lines.
func appendAddr(b []byte, side, tool string, q QPInfo) []byte {
	b = append(b, ' ')
	b = append(b, side...)
	b = append(b, " address: LID "...)
	b = appendCAltHex(b, q.LID, 4)
	b = append(b, " QPN "...)
	b = appendCAltHex(b, q.QPN, 6)
	b = append(b, " PSN "...)
	b = appendCAltHex(b, q.PSN, 6)
	switch tool {
	case "ib_read_bw":
		b = append(b, " OUT 0x10 RKey "...)
	case "ib_write_bw":
		b = append(b, " RKey "...)
	}
	if tool == "ib_read_bw" || tool == "ib_write_bw" {
		b = appendCAltHex(b, q.RKey, 8)
		b = append(b, " VAddr "...)
		b = appendCAltHex(b, q.VAddr, 16)
	}
	b = append(b, "\n GID: "...)
	b = appendGID(b, q.GID)
	return append(b, '\n')
}

// appendCAltHex is C's "%#0<w>x": the 0x prefix counts in the width, and
// zero gets no prefix at all (so LID 0 prints 0000, the quirk every RoCE
// user sees).
func appendCAltHex(b []byte, v uint64, width int) []byte {
	if v == 0 {
		for range width {
			b = append(b, '0')
		}
		return b
	}
	b = append(b, '0', 'x')
	digits := (bits.Len64(v) + 3) / 4
	for n := digits; n < width-2; n++ {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, v, 16)
}

// appendGID prints the 16 GID bytes with %02d: decimal, not hex.
func appendGID(b []byte, ip net.IP) []byte {
	var zero [16]byte
	g := ip.To16()
	if g == nil {
		g = zero[:]
	}
	for i, c := range g {
		if i > 0 {
			b = append(b, ':')
		}
		if c < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendUint(b, uint64(c), 10)
	}
	return b
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
