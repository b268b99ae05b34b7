package reports

import "sort"

// rnicNote says what the RNIC counters table holds and where the
// schemes' own counts are.
const rnicNote = "Increase over the point, summed over hosts (rnic hw_counters read before, during and after it; docs/reports.md, Out-of-order packets): " +
	"out_of_sequence is the packets that arrived out of order, packet_seq_err the sequence-error NAKs senders received, duplicate_request the retransmitted " +
	"packets a receiver already had, np_cnp_sent / rp_cnp_handled DCQCN's CNPs. Only counters that grew in some point are shown. " +
	"The load-balancing schemes' own counts (flowlets, reroutes, elephants, CNMs) are in the Scheme counters table (emulated labs)."

// rnicTable lists, per point, the RNIC counters that grew in some point of
// the run: the transport's view of what a scheme did (reordering, NAKs,
// CNPs).
func rnicTable(s *Summary) (table, bool) {
	grew := map[string]bool{}
	for _, p := range s.Points {
		for k, v := range p.RNIC {
			if v > 0 {
				grew[k] = true
			}
		}
	}
	if len(grew) == 0 {
		return table{}, false
	}
	names := make([]string, 0, len(grew))
	for k := range grew {
		names = append(names, k)
	}
	sort.Strings(names)
	t := table{Title: "RNIC counters", Note: rnicNote, Header: append([]string{"Point"}, names...)}
	for _, p := range s.Points {
		if p.RNIC == nil {
			continue
		}
		row := []string{pointName(p)}
		for _, k := range names {
			cell := na
			if v, ok := p.RNIC[k]; ok {
				cell = utoa(v)
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}
