package gemma

// Scorer is Gemma's path evaluation: PathScore = (α·L1 + β·L2) / Ref, so
// that a score of 1 is a weighted queue of Ref bytes and the fractional
// threshold SReroute separates smooth paths (below it) from congested
// ones (at or above it).
type Scorer struct {
	Alpha, Beta float64 // weights of the uplink (L1) and downlink (L2) queues
	RefBytes    float64 // the reference queue the score is a fraction of
	SReroute    float64 // a path scoring this or more is congested
	Gap         float64 // a candidate may also be one scoring more than Gap below the current path
}

// Score is the path score of queues l1 and l2 (bytes).
func (s Scorer) Score(l1, l2 int64) float64 {
	return (s.Alpha*float64(l1) + s.Beta*float64(l2)) / s.RefBytes
}

// Congested says whether a path of this score is congested (not smooth).
func (s Scorer) Congested(score float64) bool { return score >= s.SReroute }

// Candidates appends to buf the indexes of scores that the flow may move
// to from path cur: every smooth path and every path scoring more than
// Gap below cur's, in index order from start (the caller draws it, so
// that equal scores do not all favour the lowest path ID). The current
// path is never one (it is congested when this is asked, and not below
// itself).
func (s Scorer) Candidates(scores []float64, cur, start int, buf []int) []int {
	n := len(scores)
	for k := 0; k < n; k++ {
		i := (start + k) % n
		if sc := scores[i]; i != cur && (!s.Congested(sc) || sc < scores[cur]-s.Gap) {
			buf = append(buf, i)
		}
	}
	return buf
}

// Lowest is the candidate with the lowest score, the first of equals in
// cands' order; -1 if cands is empty (no reroute).
func Lowest(scores []float64, cands []int) int {
	best := -1
	for _, c := range cands {
		if best < 0 || scores[c] < scores[best] {
			best = c
		}
	}
	return best
}
