package gemma

import (
	"fmt"
	"testing"
)

func TestPathScoreAndClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sc        Scorer
		l1, l2    int64
		score     float64
		congested bool
	}{
		{Scorer{Alpha: 1, Beta: 1, RefBytes: 100_000, SReroute: 0.5}, 0, 0, 0, false},
		{Scorer{Alpha: 1, Beta: 1, RefBytes: 100_000, SReroute: 0.5}, 20_000, 20_000, 0.4, false},
		{Scorer{Alpha: 1, Beta: 1, RefBytes: 100_000, SReroute: 0.5}, 20_000, 30_000, 0.5, true}, // at the threshold: congested
		{Scorer{Alpha: 1, Beta: 1, RefBytes: 100_000, SReroute: 0.5}, 0, 60_000, 0.6, true},
		{Scorer{Alpha: 1, Beta: 0, RefBytes: 100_000, SReroute: 0.5}, 10_000, 900_000, 0.1, false}, // β = 0: reports ignored
		{Scorer{Alpha: 0.25, Beta: 2, RefBytes: 50_000, SReroute: 1}, 40_000, 20_000, 1, true},
		{Scorer{Alpha: 0.25, Beta: 2, RefBytes: 50_000, SReroute: 1}, 40_000, 19_000, 0.96, false},
	} {
		got := tc.sc.Score(tc.l1, tc.l2)
		if d := got - tc.score; d > 1e-12 || d < -1e-12 || tc.sc.Congested(got) != tc.congested {
			t.Errorf("%+v, L1 %d, L2 %d: score %g congested %v; want %g, %v", tc.sc, tc.l1, tc.l2, got, tc.sc.Congested(got), tc.score, tc.congested)
		}
	}
}

func TestCandidatesAndLowest(t *testing.T) {
	t.Parallel()
	sc := Scorer{SReroute: 0.5, Gap: 0.25} // values in eighths: exact in binary
	for _, tc := range []struct {
		name   string
		scores []float64
		cur    int
		start  int
		cands  string
		lowest int
	}{
		{"smooth paths", []float64{0.875, 0.125, 0.375, 0.25}, 0, 0, "[1 2 3]", 1},
		{"none smooth, one lower by more than the gap", []float64{1, 0.875, 0.625, 0.75}, 0, 0, "[2]", 2},
		{"lower by exactly the gap is not enough", []float64{1, 0.75, 0.75}, 0, 0, "[]", -1},
		{"every other path worse: empty set, no reroute", []float64{0.625, 0.875, 1.5}, 0, 0, "[]", -1},
		{"a single path", []float64{3}, 0, 0, "[]", -1},
		{"smooth and lower by the gap together", []float64{0.5, 0.625, 2, 0.875, 0.25}, 3, 1, "[4 0]", 4},
		{"equal scores: the first from start", []float64{1, 0.25, 0.25, 0.25}, 0, 2, "[2 3 1]", 2},
	} {
		got := sc.Candidates(tc.scores, tc.cur, tc.start, nil)
		if fmt.Sprint(got) != tc.cands && !(len(got) == 0 && tc.cands == "[]") {
			t.Errorf("%s: candidates %v, want %s", tc.name, got, tc.cands)
		}
		if l := Lowest(tc.scores, got); l != tc.lowest {
			t.Errorf("%s: lowest %d, want %d", tc.name, l, tc.lowest)
		}
	}
}
