package reports

import (
	"fmt"
	"strings"
)

// longFlowNote defines the long-flow tables' numbers.
var longFlowNote = fmt.Sprintf("Long flows: the %d largest of at least %d MB. Rates are Gb/s on the wire (headers included), read at a port that carries the flow alone: "+
	"its receiver's access port, else its sender's (docs/reports.md, Long flows). A flow is a victim when its rate during the burst "+
	"is below %.0f%% of its rate before it.", maxLongFlows, longFlowBytes/1_000_000, VictimShare*100)

const pathNote = "Fabric ports: switch ports whose link goes to another switch. Utilisation = tx rate / link speed over the window " +
	"(mean) and in the busiest time bin (peak). A port is paused when it sent or received PFC PAUSE frames during the burst window " +
	"(the whole window without a burst)."

// msAfter prints a time since a point's start in ms.
func msAfter(ns, start int64) string { return fmt.Sprintf("%.2f", float64(ns-start)/1e6) }

func gbpsOpt(p *float64) string { return optional(p, gbps) }

func victimCell(v *bool) string {
	if v == nil {
		return na
	}
	return yesNo(*v)
}

// seriesTables are the long-flow, victim and path tables of the points
// that have them.
func seriesTables(s *Summary) []table {
	burst := table{Title: "Long flows around the burst (Gb/s)", Note: longFlowNote,
		Header: []string{"Point", "Flow", "Size (MB)", "Measured at", "Before", "During", "After", "Victim"}}
	quarters := table{Title: "Long flows by quarter of their life (Gb/s)", Note: longFlowNote,
		Header: []string{"Point", "Flow", "Size (MB)", "Measured at", "Q1", "Q2", "Q3", "Q4"}}
	victims := table{Title: "Victims and paused paths", Note: pathNote,
		Header: []string{"Point", "Scheme", "Burst (ms after start)", "Victims", "Paused fabric ports", "PAUSE frames on fabric ports (tx / rx)"}}
	paths := table{Title: "Path utilisation by switch tier", Note: pathNote,
		Header: []string{"Point", "Tier", "Fabric ports", "Mean util", "Busiest port", "Its mean util", "Peak util", "Paused ports"}}
	for _, p := range s.Points {
		name := pointName(p)
		var vs []string
		for _, f := range p.LongFlows {
			if f.Port == "" {
				continue // no port carries it alone: nothing measured
			}
			row := []string{name, flowName(f), fmt.Sprintf("%.1f", float64(f.Bytes)/1e6), cmpDash(f.Port)}
			rates := map[string]*float64{}
			for _, x := range f.Periods {
				rates[x.Name] = x.Gbps
			}
			if p.BurstWindow != nil {
				row = append(row, gbpsOpt(rates[PeriodBefore]), gbpsOpt(rates[PeriodDuring]), gbpsOpt(rates[PeriodAfter]), victimCell(f.Victim))
				burst.Rows = append(burst.Rows, row)
			} else {
				quarters.Rows = append(quarters.Rows, append(row, gbpsOpt(rates["q1"]), gbpsOpt(rates["q2"]), gbpsOpt(rates["q3"]), gbpsOpt(rates["q4"])))
			}
			if f.Victim != nil && *f.Victim {
				vs = append(vs, flowName(f))
			}
		}
		if len(p.Paths) == 0 {
			continue
		}
		var paused []string
		var tx, rx uint64
		for _, u := range p.Paths {
			tx, rx = tx+u.PauseTx, rx+u.PauseRx
			if u.Paused() {
				paused = append(paused, u.Device+":"+u.Port)
			}
		}
		if b := p.BurstWindow; b != nil {
			victims.Rows = append(victims.Rows, []string{name, cmpDash(p.Scheme), msAfter(b.StartNs, p.WindowStartNs) + "–" + msAfter(b.EndNs, p.WindowStartNs),
				listOrNone(vs), listOrNone(paused), utoa(tx) + " / " + utoa(rx)})
		}
		paths.Rows = append(paths.Rows, tierRows(name, p.Paths)...)
	}
	var out []table
	for _, t := range []table{burst, quarters, victims, paths} {
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	if t, ok := rnicTable(s); ok {
		out = append(out, t)
	}
	return out
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// tierRows summarise a point's fabric ports per tier.
func tierRows(name string, us []PathUse) [][]string {
	var rows [][]string
	for i := 0; i < len(us); {
		j := i
		var sum float64
		var n, paused int
		busy, peak := -1, 0.0
		for ; j < len(us) && us[j].Tier == us[i].Tier; j++ {
			u := us[j]
			if u.Paused() {
				paused++
			}
			if u.MeanUtil == nil {
				continue
			}
			n++
			sum += *u.MeanUtil
			if busy < 0 || *u.MeanUtil > *us[busy].MeanUtil {
				busy = j
			}
			peak = max(peak, deref(u.PeakUtil))
		}
		row := []string{name, us[i].Tier, itoa(j - i), na, na, na, na, itoa(paused)}
		if n > 0 {
			b := us[busy]
			row[3], row[4], row[5], row[6] = pct(sum/float64(n)), b.Device+":"+b.Port+" → "+b.Peer, pct(*b.MeanUtil), pct(peak)
		}
		rows = append(rows, row)
		i = j
	}
	return rows
}

// seriesFigures are a point's long-flow throughput and per-tier path
// utilisation plots.
func seriesFigures(p PointSummary, point string) ([]figure, error) {
	var out []figure
	add := func(title, y string, ss []Series) error {
		f, err := seriesPlotRoom(title, y, p.WindowStartNs, ss, true)
		if f != nil {
			out = append(out, *f)
		}
		return err
	}
	burst := ""
	if b := p.BurstWindow; b != nil {
		burst = fmt.Sprintf(" (burst %s–%s ms)", msAfter(b.StartNs, p.WindowStartNs), msAfter(b.EndNs, p.WindowStartNs))
	}
	if err := add("Long flows' throughput"+burst+": "+point, "Gb/s on the wire", p.FlowSeries); err != nil {
		return nil, err
	}
	for _, t := range p.PathSeries {
		title := fmt.Sprintf("Fabric port utilisation, %s tier (busiest %d)%s: %s", t.Tier, seriesPathsPerTier, burst, point)
		if err := add(title, "tx / link speed", t.Series); err != nil {
			return nil, err
		}
	}
	return out, nil
}
