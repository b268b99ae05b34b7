package connectx

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// GID is one row of `show_gids`.
type GID struct {
	Dev    string
	Port   int
	Index  int
	GID    string // 8 groups of 4 hex digits
	IPv4   string // "" for non-IPv4 GIDs
	Ver    string // v1 | v2
	Netdev string
}

// FormatShowGIDs prints mlnx-tools' show_gids table.
func FormatShowGIDs(w io.Writer, gids []GID) error {
	b := bufio.NewWriter(w)
	b.WriteString("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n")
	b.WriteString("---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n")
	for _, g := range gids {
		ip := "\t\t"
		if g.IPv4 != "" {
			ip = g.IPv4 + "  \t"
		}
		fmt.Fprintf(b, "%s\t%d\t%d\t%s\t%s%s\t%s\n", g.Dev, g.Port, g.Index, g.GID, ip, g.Ver, g.Netdev)
	}
	fmt.Fprintf(b, "n_gids_found=%d\n", len(gids))
	return b.Flush()
}

// ParseShowGIDs reads show_gids output. A row is DEV PORT INDEX GID, then
// the IPv4 address (IPv4-mapped GIDs only), VER and the netdev. InfiniBand
// ports have no netdev: mlnx-tools prints the row with the DEV column empty
// (a trailing tab), so the row is split on whitespace and the optional
// columns are told apart by what they hold, which also reads output whose
// tabs became spaces.
//
// UNCERTAIN: on IB ports the kernel's gid_attrs/types file reads
// "IB/RoCE v1" and show_gids prints v1; an empty VER (types unreadable on
// an old kernel) is accepted too.
func ParseShowGIDs(out string) ([]GID, error) {
	var gids []GID
	found := -1
	for n, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "n_gids_found="); ok {
			found, _ = strconv.Atoi(strings.TrimSpace(v))
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "DEV" || f[0] == "---" {
			continue
		}
		g, ok := parseGIDRow(f)
		if !ok {
			return nil, fmt.Errorf("show_gids: line %d: %q: want DEV PORT INDEX GID [IPv4] [VER] [DEV]", n+1, line)
		}
		gids = append(gids, g)
	}
	if found >= 0 && found != len(gids) {
		return nil, fmt.Errorf("show_gids: n_gids_found=%d but %d rows", found, len(gids))
	}
	return gids, nil
}

func parseGIDRow(f []string) (GID, bool) {
	if len(f) < 4 || len(f) > 7 {
		return GID{}, false
	}
	g := GID{Dev: f[0], GID: f[3]}
	var e1, e2 error
	g.Port, e1 = strconv.Atoi(f[1])
	g.Index, e2 = strconv.Atoi(f[2])
	if e1 != nil || e2 != nil {
		return GID{}, false
	}
	rest := f[4:]
	if len(rest) > 0 && isIPv4(rest[0]) {
		g.IPv4, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && (rest[0] == "v1" || rest[0] == "v2") {
		g.Ver, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		g.Netdev, rest = rest[0], rest[1:]
	}
	return g, len(rest) == 0
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// gidString prints an IPv6 address as show_gids does: 8 groups of %04x.
func gidString(ip net.IP) string {
	ip = ip.To16()
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = fmt.Sprintf("%02x%02x", ip[2*i], ip[2*i+1])
	}
	return strings.Join(parts, ":")
}

// StandardGIDs is the usual table of a RoCE port: link-local v1/v2 (from
// the MAC's EUI-64) at indexes 0/1, IPv4-mapped v1/v2 at 2/3.
func StandardGIDs(dev, netdev string, mac net.HardwareAddr, ip net.IP) []GID {
	ll := make(net.IP, 16)
	ll[0], ll[1] = 0xfe, 0x80
	if len(mac) == 6 {
		copy(ll[8:], []byte{mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]})
	}
	out := []GID{
		{Dev: dev, Port: 1, Index: 0, GID: gidString(ll), Ver: "v1", Netdev: netdev},
		{Dev: dev, Port: 1, Index: 1, GID: gidString(ll), Ver: "v2", Netdev: netdev},
	}
	if v4 := ip.To4(); v4 != nil {
		g := gidString(v4.To16())
		out = append(out, GID{Dev: dev, Port: 1, Index: 2, GID: g, IPv4: v4.String(), Ver: "v1", Netdev: netdev},
			GID{Dev: dev, Port: 1, Index: 3, GID: g, IPv4: v4.String(), Ver: "v2", Netdev: netdev})
	}
	return out
}
