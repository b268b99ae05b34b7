package reunion

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// TestSketchSizing: ε and δ give the paper's example, 2000 counters by 7
// rows for ε = 0.001 and δ = 0.01.
func TestSketchSizing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		eps, delta float64
		w, d       int
	}{{0.001, 0.01, 2000, 7}, {0.01, 0.5, 200, 1}, {0.1, 0.001, 20, 10}} {
		if w, d := sketchSize(tc.eps, tc.delta); w != tc.w || d != tc.d {
			t.Errorf("ε %g δ %g: %d x %d, want %d x %d", tc.eps, tc.delta, w, d, tc.w, tc.d)
		}
	}
}

// TestSketchAgainstExactCounts: a skewed stream of 20,000 keys (a few
// heavy, most light) into sketches of several sizes. Against the exact
// counts, no estimate is below its key's count, and the share of keys
// over by more than ε·N stays within δ (plus a sampling margin of a
// quarter of δ or 0.005, whichever is larger). In a hot set as large as
// the heavy keys, a heavy key (far above ε·N) is missing only where a
// light key overshot by more than ε·N took its place: no more are missing
// than overshot.
func TestSketchAgainstExactCounts(t *testing.T) {
	t.Parallel()
	const keys, heavy = 20_000, 16
	for _, tc := range []struct{ eps, delta float64 }{{0.001, 0.01}, {0.0005, 0.05}, {0.002, 0.25}} {
		s := newSketch(tc.eps, tc.delta)
		exact := make([]uint32, keys)
		r := lb.NewRand(7)
		add := func(k int, n uint32) { s.add(lb.Mix(uint64(k)+1), n); exact[k] += n }
		for k := 0; k < keys; k++ {
			add(k, 1+uint32(r.Next(0)%8))
		}
		for k := 0; k < heavy; k++ {
			add(k*997%keys, 5000)
		}
		bound := uint64(tc.eps * float64(s.total))
		over := 0
		for k := 0; k < keys; k++ {
			est := s.estimate(lb.Mix(uint64(k) + 1))
			if est < exact[k] {
				t.Fatalf("ε %g: key %d estimated %d below its count %d", tc.eps, k, est, exact[k])
			}
			if uint64(est-exact[k]) > bound {
				over++
			}
		}
		share := float64(over) / keys
		t.Logf("ε %g δ %g (%d x %d): N %d, bound %d, %d keys over it (%.4f)", tc.eps, tc.delta, s.width, s.depth, s.total, bound, over, share)
		if share > tc.delta+max(tc.delta/4, 0.005) {
			t.Errorf("ε %g δ %g: %.4f of keys over ε·N, want at most δ", tc.eps, tc.delta, share)
		}
		h := hot{n: heavy}
		for k := 0; k < keys; k++ {
			h.update(int32(k), s.estimate(lb.Mix(uint64(k)+1)))
		}
		missing := 0
		for k := 0; k < heavy; k++ {
			found := false
			for _, f := range h.flow {
				found = found || int(f) == k*997%keys
			}
			if !found {
				missing++
			}
		}
		if missing > over {
			t.Errorf("ε %g: %d heavy keys not among the %d hot, but only %d keys overshot", tc.eps, missing, heavy, over)
		}
	}
}

// TestSketchDecay: decay scales every counter (half: halved, 0: a reset),
// and a hot set with decayed estimates lets a newer heavy flow in.
func TestSketchDecay(t *testing.T) {
	t.Parallel()
	s := newSketch(0.01, 0.1)
	s.add(1, 1000)
	s.decay(512)
	if got := s.estimate(1); got != 500 {
		t.Errorf("after halving: %d, want 500", got)
	}
	s.decay(0)
	if got := s.estimate(1); got != 0 || s.total != 0 {
		t.Errorf("after a reset: %d (N %d), want 0", got, s.total)
	}
	h := hot{n: 1}
	h.update(1, 1000)
	if h.update(2, 600) {
		t.Error("a lighter flow took the only hot slot")
	}
	h.decay(512)
	if !h.update(2, 600) || h.flow[0] != 2 {
		t.Errorf("after decay the heavier new flow is not hot: %v", h.flow)
	}
}
