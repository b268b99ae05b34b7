package selb

import (
	"slices"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// maxIter bounds Algorithm 1's loop. One-dimensional k-means reaches a
// fixed point in a handful of rounds; the bound only guards against a
// cycle of floating-point ties.
const maxIter = 64

// kmeans is the paper's Algorithm 1 on the queue lengths q: it picks k
// distinct values of q at random (rng, mixed with salt) as the starting
// centroids (fewer when q has fewer distinct values), then assigns every
// path to its nearest centroid and moves every non-empty cluster's
// centroid to its members' mean until no centroid moves. It writes each
// path's cluster into assign and returns the clusters used and the
// backup: the non-empty cluster of the lowest mean. cent is scratch of
// at least k (no allocation).
func kmeans(q []int64, k int, assign []int8, cent []float64, rng *lb.Rand, salt uint64) (clusters, backup int) {
	k = pickCentroids(q, k, cent, rng, salt)
	return k, lloyd(q, cent[:k], assign)
}

// lloyd iterates Algorithm 1 from the centroids cent until none moves (an
// empty cluster keeps its centroid) and returns the backup cluster.
func lloyd(q []int64, cent []float64, assign []int8) (backup int) {
	for range maxIter {
		for i, v := range q {
			assign[i] = int8(nearest(float64(v), cent))
		}
		moved := false
		for c := range cent {
			var sum float64
			n := 0
			for i, v := range q {
				if int(assign[i]) == c {
					sum += float64(v)
					n++
				}
			}
			if n > 0 && sum/float64(n) != cent[c] {
				cent[c], moved = sum/float64(n), true
			}
		}
		if !moved {
			break
		}
	}
	backup = -1
	for c := range cent {
		if slices.Contains(assign[:len(q)], int8(c)) && (backup < 0 || cent[c] < cent[backup]) {
			backup = c
		}
	}
	return backup
}

// pickCentroids draws min(k, distinct values of q) distinct values of q
// into cent, each time uniformly among the values not yet drawn (by
// rejection: q is a switch's few uplinks).
func pickCentroids(q []int64, k int, cent []float64, rng *lb.Rand, salt uint64) int {
	distinct := 0
	for i, v := range q {
		if !slices.Contains(q[:i], v) {
			distinct++
		}
	}
	k = min(k, distinct)
	for c := 0; c < k; c++ {
		for {
			v := float64(q[rng.Next(salt)%uint64(len(q))])
			if !slices.Contains(cent[:c], v) {
				cent[c] = v
				break
			}
		}
	}
	return k
}

// nearest is the index of the centroid closest to v; of two equally
// close, the lower one (a tie goes to the shorter queues).
func nearest(v float64, cent []float64) int {
	best := 0
	for c := 1; c < len(cent); c++ {
		d, bd := abs(v-cent[c]), abs(v-cent[best])
		if d < bd || d == bd && cent[c] < cent[best] {
			best = c
		}
	}
	return best
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
