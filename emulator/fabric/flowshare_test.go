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

// TestFlowHeapRefixKeepsTheOrder: re-timing many completions at once
// (keys set, then the heap restored bottom-up) or a few (one sift each)
// leaves the heap giving its items by (time, rank), as fix does.
func TestFlowHeapRefixKeepsTheOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, moved := range []int{1, 10, 200, 1000} {
		var h flowHeap
		h.reset(0)
		type item struct {
			key  int64
			rank int32
		}
		items := map[int32]item{}
		for id := int32(0); id < 1000; id++ {
			it := item{int64(rng.IntN(500)), int32(rng.IntN(1 << 20))}
			items[id] = it
			h.push(id, it.rank, it.key)
		}
		var ids []int32
		var keys []int64
		for _, i := range rng.Perm(1000)[:moved] {
			k := int64(rng.IntN(500))
			ids, keys = append(ids, int32(i)), append(keys, k)
			it := items[int32(i)]
			it.key = k
			items[int32(i)] = it
		}
		h.refix(ids, keys)
		var last item
		for n := 0; n < 1000; n++ {
			it := items[h.pop()]
			if n > 0 && (it.key < last.key || it.key == last.key && it.rank < last.rank) {
				t.Fatalf("%d re-timed: item %d (%d, %d) came after (%d, %d)", moved, n, it.key, it.rank, last.key, last.rank)
			}
			last = it
		}
	}
}
