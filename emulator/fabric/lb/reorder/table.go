package reorder

// FlowTable is per-flow state of one switch, dense in the flows the
// switch has seen: a switch sees few of a run's flows, so a row per flow
// index would cost every switch a row for every flow. It grows per flow,
// never per packet.
type FlowTable[T any] struct {
	slot []int32 // by flow index: row+1, 0 none
	rows []T
}

// Get is flow i's row, made zero on first use. The pointer is good until
// the next Get of a new flow.
func (t *FlowTable[T]) Get(i int32) *T {
	if int(i) >= len(t.slot) {
		t.slot = append(t.slot, make([]int32, int(i)+1-len(t.slot)+len(t.slot)/2)...)
	}
	s := t.slot[i]
	if s == 0 {
		var zero T
		t.rows = append(t.rows, zero)
		s = int32(len(t.rows))
		t.slot[i] = s
	}
	return &t.rows[s-1]
}

// Reset forgets every flow, keeping the memory.
func (t *FlowTable[T]) Reset() {
	clear(t.slot)
	t.rows = t.rows[:0]
}
