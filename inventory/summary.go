package inventory

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteSummary prints a lab for people: devices, RNICs, links. Credentials
// appear by name only; a lab never holds secrets.
func WriteSummary(w io.Writer, l *Lab) error {
	kind := "hardware"
	if l.Emulated {
		kind = "emulated"
	}
	fmt.Fprintf(w, "lab %s (%s): %d switches, %d hosts, %d links\n", l.Name, kind, len(l.Switches), len(l.Hosts), len(l.Links))
	if l.File != "" {
		fmt.Fprintf(w, "file: %s\n", l.File)
	}
	if l.KnownHosts != "" {
		fmt.Fprintf(w, "known_hosts: %s\n", l.KnownHosts)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSWITCH\tROLE\tMODEL\tPORTS\tSSH\tGNMI\tNETCONF\tCREDENTIAL")
	for _, s := range l.Switches {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Name, s.Role, dash(s.Model), len(s.Ports), dash(s.Mgmt.SSH), dash(s.Mgmt.GNMI), dash(s.Mgmt.NETCONF), dash(s.Credential))
	}
	fmt.Fprintln(tw, "\nHOST\tRNIC\tNETDEV\tGID\tGBPS\tIP\tSSH\tCREDENTIAL")
	for _, h := range l.Hosts {
		for _, r := range h.RNICs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%g\t%s\t%s\t%s\n", h.Name, r.Device, r.Netdev, r.GIDIndex, r.SpeedGbps, r.IP, dash(h.Mgmt.SSH), dash(h.Credential))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var names []string
	for n := range l.Credentials {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(w, "\ncredentials (references only): %s\n", strings.Join(names, ", "))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
