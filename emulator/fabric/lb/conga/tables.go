package conga

// pathMetrics are one leaf's metrics about the paths between it and one
// other leaf: Congestion-To-Leaf at a source ToR (what the other leaf fed
// back) or Congestion-From-Leaf at a destination ToR (the CE fields that
// arrived from the other leaf, to feed back). Sized once per leaf pair.
type pathMetrics struct {
	metric  []int32
	updated []int64 // ns
	valid   []bool  // ever set
	changed []bool  // From-Leaf: not fed back since it changed
	next    int     // From-Leaf: where the round robin resumes
}

func newPathMetrics(paths int) *pathMetrics {
	return &pathMetrics{metric: make([]int32, paths), updated: make([]int64, paths),
		valid: make([]bool, paths), changed: make([]bool, paths)}
}

// set records a metric about path id at time now.
func (t *pathMetrics) set(id int32, metric int32, now int64) {
	if id < 0 || int(id) >= len(t.metric) {
		return
	}
	if !t.valid[id] || t.metric[id] != metric {
		t.changed[id] = true
	}
	t.metric[id], t.updated[id], t.valid[id] = metric, now, true
}

// get is the metric about path id at time now: 0 if unknown or not
// refreshed for longer than age ns (CONGA ages remote metrics to 0, so a
// path once congested is tried again).
func (t *pathMetrics) get(id int, now, age int64) int32 {
	if t == nil || id >= len(t.metric) || !t.valid[id] || now-t.updated[id] > age {
		return 0
	}
	return t.metric[id]
}

// feedback picks the (path, metric) to piggyback on one packet going back
// to the other leaf: the next changed metric in round-robin order, or, if
// none changed, the next one still fresh (it refreshes the other leaf's
// copy); ok is false when there is nothing to say.
func (t *pathMetrics) feedback(now, age int64) (id int32, metric int32, ok bool) {
	if t == nil {
		return 0, 0, false
	}
	n := len(t.metric)
	pick := func(i int) (int32, int32, bool) {
		t.changed[i] = false
		t.next = (i + 1) % n
		return int32(i), t.metric[i], true
	}
	for k := 0; k < n; k++ {
		if i := (t.next + k) % n; t.changed[i] && now-t.updated[i] <= age {
			return pick(i)
		}
	}
	for k := 0; k < n; k++ {
		if i := (t.next + k) % n; t.valid[i] && now-t.updated[i] <= age {
			return pick(i)
		}
	}
	return 0, 0, false
}
