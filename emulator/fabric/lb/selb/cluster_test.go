package selb

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// groups writes a clustering as its clusters' members, by first member
// ("0 1|2 3|4 5"), so that cluster numbering does not matter.
func groups(assign []int8) string {
	var order []int8
	by := map[int8][]string{}
	for i, c := range assign {
		if _, ok := by[c]; !ok {
			order = append(order, c)
		}
		by[c] = append(by[c], fmt.Sprint(i))
	}
	var g []string
	for _, c := range order {
		g = append(g, strings.Join(by[c], " "))
	}
	return strings.Join(g, "|")
}

// members are the paths of cluster c.
func members(assign []int8, c int) string {
	var m []string
	for i, a := range assign {
		if int(a) == c {
			m = append(m, fmt.Sprint(i))
		}
	}
	return strings.Join(m, " ")
}

// TestLloyd: Algorithm 1's iteration from given starting centroids on
// known queue vectors reaches the expected clusters and backup.
func TestLloyd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		q      []int64
		init   []float64
		groups string
		backup string // the backup cluster's members
	}{
		{"three clear groups", []int64{0, 0, 10, 12, 100, 110}, []float64{0, 10, 100}, "0 1|2 3|4 5", "0 1"},
		{"centroids in any order", []int64{0, 0, 10, 12, 100, 110}, []float64{100, 10, 0}, "0 1|2 3|4 5", "0 1"},
		{"a poor start: a local optimum", []int64{0, 0, 10, 12, 100, 110}, []float64{10, 100, 110}, "0 1 2 3|4|5", "0 1 2 3"},
		{"start 0, 12, 100: the middle group pulls 10 over", []int64{0, 0, 10, 12, 100, 110}, []float64{0, 12, 100}, "0 1|2 3|4 5", "0 1"},
		{"an empty cluster keeps its centroid and is no backup", []int64{0, 0, 10, 12, 100, 110}, []float64{0, 50, 1000}, "0 1 2 3|4 5", "0 1 2 3"},
		{"a tie goes to the shorter queues", []int64{0, 10, 20}, []float64{0, 20}, "0 1|2", "0 1"},
		{"the backup is the lowest mean, not the first path's", []int64{90, 5, 80, 7}, []float64{90, 5}, "0 2|1 3", "1 3"},
		{"one cluster", []int64{3, 9, 1}, []float64{9}, "0 1 2", "0 1 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assign := make([]int8, len(tc.q))
			b := lloyd(tc.q, slices.Clone(tc.init), assign)
			if g := groups(assign); g != tc.groups {
				t.Errorf("clusters %s, want %s", g, tc.groups)
			}
			if m := members(assign, b); m != tc.backup {
				t.Errorf("backup %s, want %s", m, tc.backup)
			}
		})
	}
}

// TestKMeans: with random starts (many seeds) the clustering draws k
// distinct values, fewer when there are fewer distinct queue lengths,
// and ends at a fixed point of Algorithm 1: every path nearest its own
// centroid, every centroid its members' mean. On [0 0 10 12 100 110]
// with k = 3 it ends in one of the two fixed points reachable from
// distinct starting values.
func TestKMeans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q        []int64
		k        int
		clusters int
		want     []string // acceptable groupings; nil: any fixed point
	}{
		{[]int64{0, 0, 10, 12, 100, 110}, 3, 3, []string{"0 1|2 3|4 5", "0 1 2 3|4|5"}},
		{[]int64{5, 5, 5, 5}, 3, 1, []string{"0 1 2 3"}},
		{[]int64{0, 0, 7, 7}, 3, 2, []string{"0 1|2 3"}},
		{[]int64{0, 7, 0, 7}, 8, 2, []string{"0 2|1 3"}},
		{[]int64{4, 1, 9, 16, 25, 36, 49, 64}, 4, 4, nil},
		{[]int64{3}, 2, 1, []string{"0"}},
	} {
		seen := map[string]bool{}
		for s := uint64(1); s <= 200; s++ {
			rng := lb.NewRand(s)
			assign, cent := make([]int8, len(tc.q)), make([]float64, tc.k)
			n, b := kmeans(tc.q, tc.k, assign, cent, &rng, 0)
			g := groups(assign)
			seen[g] = true
			if n != tc.clusters || b < 0 || b >= n {
				t.Fatalf("%v k=%d seed %d: %d clusters, backup %d; want %d", tc.q, tc.k, s, n, b, tc.clusters)
			}
			if tc.want != nil && !slices.Contains(tc.want, g) {
				t.Errorf("%v k=%d seed %d: clusters %s, want one of %v", tc.q, tc.k, s, g, tc.want)
			}
			for i, v := range tc.q {
				if c := nearest(float64(v), cent[:n]); c != int(assign[i]) {
					t.Errorf("%v seed %d: path %d in cluster %d, nearest centroid %d (%v)", tc.q, s, i, assign[i], c, cent[:n])
				}
			}
			for c := 0; c < n; c++ {
				if c != b && members(assign, c) != "" && cent[c] < cent[b] {
					t.Errorf("%v seed %d: cluster %d's mean %g below the backup's %g", tc.q, s, c, cent[c], cent[b])
				}
			}
		}
		if len(tc.want) > 1 && len(seen) < 2 {
			t.Errorf("%v: 200 seeds gave only %v: the start is not random", tc.q, seen)
		}
	}
}

// TestGrowing: a path is congested when its queue grew faster than θ
// (bytes per us) over the period, not at θ, not when it shrank.
func TestGrowing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prev, now, periodNs int64
		theta               float64
		want                bool
	}{
		{0, 10_000, 5_000, 2000, false}, // exactly θ
		{0, 10_005, 5_000, 2000, true},
		{50_000, 60_000, 5_000, 2000, false},
		{50_000, 60_001, 5_000, 2000, true},
		{60_000, 0, 5_000, 2000, false}, // draining
		{100_000, 100_000, 5_000, 0, false},
		{100_000, 100_001, 5_000, 0, true},
		{0, 10_005, 10_000, 2000, false}, // the same growth over a longer period
	} {
		if got := growing(tc.prev, tc.now, tc.periodNs, tc.theta); got != tc.want {
			t.Errorf("%d -> %d bytes in %d ns, θ %g bytes/us: congested %v, want %v", tc.prev, tc.now, tc.periodNs, tc.theta, got, tc.want)
		}
	}
}

// TestChoose: SELB's rerouting rule on known clusters, congestion marks
// and queues.
func TestChoose(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		row       []int16 // path ID -> uplink
		cur       int32
		assign    []int8
		congested []bool
		q         []int64
		how       outcome
		ids       []int32 // every choice seen over many draws
	}{
		{"a non-congested path of the cluster", []int16{0, 1, 2, 3}, 0, []int8{0, 0, 1, 1},
			[]bool{true, false, false, false}, []int64{50, 40, 5, 3}, inCluster, []int32{1}},
		{"any of them, at random", []int16{0, 1, 2, 3}, 0, []int8{0, 0, 0, 1},
			[]bool{true, false, false, false}, []int64{50, 40, 45, 3}, inCluster, []int32{1, 2}},
		{"the cluster all congested: the shortest queue", []int16{0, 1, 2, 3}, 0, []int8{0, 0, 1, 1},
			[]bool{true, true, false, false}, []int64{50, 40, 5, 3}, shortest, []int32{3}},
		{"shortest queues tied: either", []int16{0, 1, 2, 3}, 0, []int8{0, 0, 1, 1},
			[]bool{true, true, false, false}, []int64{50, 40, 3, 3}, shortest, []int32{2, 3}},
		{"the shortest queue even if congested", []int16{0, 1, 2, 3}, 1, []int8{0, 1, 0, 0},
			[]bool{false, true, true, true}, []int64{9, 40, 2, 7}, shortest, []int32{2}},
		{"alone and shortest: stay", []int16{0, 1, 2, 3}, 0, []int8{0, 1, 1, 1},
			[]bool{true, false, false, false}, []int64{1, 5, 6, 7}, stay, []int32{0}},
		{"paths sharing the uplink do not count", []int16{0, 0, 1, 1}, 1, []int8{0, 0},
			[]bool{true, false}, []int64{20, 18}, inCluster, []int32{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := lb.NewRand(7)
			got := map[int32]bool{}
			for range 100 {
				id, how := choose(tc.row, tc.cur, tc.assign, tc.congested, tc.q, &rng, 3)
				if how != tc.how {
					t.Fatalf("outcome %d, want %d", how, tc.how)
				}
				got[id] = true
			}
			var ids []int32
			for id := range got {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("chose %v, want %v", ids, tc.ids)
			}
		})
	}
}
