package fabric

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShareQueueSortsALevelByIndex: the fill takes a level of equal shares
// in index order (links, and flows' bounds as negative indexes), whatever
// the level's size and spread: sortAt agrees with a sort, and leaves its
// scratch clear for the next level.
func TestShareQueueSortsALevelByIndex(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	distinct := func(n, lo, hi int) []int {
		seen := map[int]bool{}
		var s []int
		for len(s) < n {
			if v := lo + rng.IntN(hi-lo); !seen[v] {
				seen[v] = true
				s = append(s, v)
			}
		}
		return s
	}
	for _, tc := range []struct {
		name string
		at   []int
	}{
		{"empty", nil},
		{"one", []int{5}},
		{"few, bounds and links", []int{7, -3, 2, -1, 0}},
		{"twelve", distinct(12, -20, 20)},
		{"dense, many", distinct(500, -1400, 6144)},
		{"dense range", distinct(300, 0, 320)},
		{"sparse, many", distinct(20, -1_000_000, 1_000_000)},
		{"crossing words", []int{63, 64, 127, 128, -64, -65, 0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		var q shareQueue
		for round := 0; round < 2; round++ { // the second with the scratch used once
			q.at = slices.Clone(tc.at)
			want := slices.Sorted(slices.Values(tc.at))
			q.sortAt()
			if !slices.Equal(q.at, want) {
				t.Fatalf("%s: sortAt = %v, want %v", tc.name, q.at, want)
			}
			for i, w := range q.bits {
				if w != 0 {
					t.Fatalf("%s: scratch word %d left %x", tc.name, i, w)
				}
			}
		}
	}
}
