package reports

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/labctl/labctl/collectors"
)

// Elephants per path: Reunion's per-link counters (collectors/lbschema.go,
// scope "port"): per fabric link, named by the switch and egress port it
// leaves, the most distinct elephants it carried in one of the scheme's
// intervals and the elephant-intervals (the sum over intervals of the
// elephants on it). Both restart with each run and only grow within it,
// and the twin carries them over runs as a counter, so a point's
// increase, as for every counter here, is the run's maximum and its sum.
// One difference: a port counter with no sample before the window
// started at 0 (other counters take their first sample in the window):
// the twin serves a link's counters from the moment its module is set
// (lb.Installer), so the first sample of a point normally has them.

// collideOver is the tolerance the summary counts links against: Reunion's
// default t = 1 (a link with more carried colliding elephants).
const collideOver = 1

// LinkElephants are one fabric link's elephants in a point.
type LinkElephants struct {
	Device    string `json:"device"`
	Port      string `json:"port"`
	Max       uint64 `json:"elephants_max"`
	Intervals uint64 `json:"elephant_intervals"`
}

// addLinkElephants adds one port counter's increase d to the point's links.
func addLinkElephants(ps *PointSummary, k ckey, d uint64) {
	cmpLink := func(l LinkElephants, o LinkElephants) int {
		return cmp.Or(cmp.Compare(l.Device, o.Device), cmp.Compare(l.Port, o.Port))
	}
	key := LinkElephants{Device: k.device, Port: k.port}
	i, found := slices.BinarySearchFunc(ps.PathElephants, key, cmpLink)
	if !found {
		ps.PathElephants = slices.Insert(ps.PathElephants, i, key)
	}
	switch k.queue {
	case collectors.LBElephantsMax:
		ps.PathElephants[i].Max += d
	case collectors.LBElephantIntervals:
		ps.PathElephants[i].Intervals += d
	}
}

// pathElephantsTables are the summary, one row per point with per-link
// counts, and the per-link table (links that carried an elephant).
func pathElephantsTables(s *Summary) []table {
	sum := table{Title: "Elephants per path", Note: "Reunion's elephants per fabric link (emulated lab): the most distinct elephants " +
		"one link carried in one interval s, and the links that carried more than t = " + strconv.Itoa(collideOver) +
		" at once (colliding elephants).",
		Header: []string{"Point", "Scheme", "Links with elephants", "Max elephants on a link", "Links with > " + strconv.Itoa(collideOver), "Elephant-intervals"}}
	per := table{Title: "Elephants per link", Note: "Per fabric link (the switch and port it leaves): the most elephants in one interval, " +
		"and elephant-intervals (the elephants on it summed over the intervals).",
		Header: []string{"Point", "Scheme", "Link", "Elephants max", "Elephant-intervals"}}
	for _, p := range s.Points {
		if len(p.PathElephants) == 0 {
			continue
		}
		var used, most, over, total uint64
		for _, l := range p.PathElephants {
			if l.Intervals == 0 {
				continue
			}
			used++
			most, total = max(most, l.Max), total+l.Intervals
			if l.Max > collideOver {
				over++
			}
			per.Rows = append(per.Rows, []string{pointName(p), cmpDash(p.Scheme), l.Device + " " + l.Port, utoa(l.Max), utoa(l.Intervals)})
		}
		sum.Rows = append(sum.Rows, []string{pointName(p), cmpDash(p.Scheme), utoa(used), utoa(most), utoa(over), utoa(total)})
	}
	return []table{sum, per}
}
