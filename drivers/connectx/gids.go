package connectx

import (
	"bufio"
	"fmt"
	"io"
	"net"
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

// ParseShowGIDs reads show_gids output.
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
		if len(f) != 6 && len(f) != 7 {
			return nil, fmt.Errorf("show_gids: line %d: %q: want DEV PORT INDEX GID [IPv4] VER DEV", n+1, line)
		}
		g := GID{Dev: f[0], GID: f[3], Ver: f[len(f)-2], Netdev: f[len(f)-1]}
		var e1, e2 error
		g.Port, e1 = strconv.Atoi(f[1])
		g.Index, e2 = strconv.Atoi(f[2])
		if e1 != nil || e2 != nil {
			return nil, fmt.Errorf("show_gids: line %d: bad port or index in %q", n+1, line)
		}
		if len(f) == 7 {
			g.IPv4 = f[4]
		}
		gids = append(gids, g)
	}
	if found >= 0 && found != len(gids) {
		return nil, fmt.Errorf("show_gids: n_gids_found=%d but %d rows", found, len(gids))
	}
	return gids, nil
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
