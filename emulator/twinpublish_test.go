package emulator

import (
	"sync"
	"testing"
	"time"
)

// The publication queue hands snapshots over in order, holds at most
// maxQueued while the publisher is busy (the simulation then waits), and
// flush returns only when all are published.
func TestPublicationQueueOrderBoundAndFlush(t *testing.T) {
	t.Parallel()
	var q pubQueue
	release := make(chan struct{})
	var mu sync.Mutex
	var got []int64
	publish := func(s snapshot) {
		<-release
		mu.Lock()
		got = append(got, s.ts.UnixNano())
		mu.Unlock()
	}
	n := maxQueued + 1 // one being published, maxQueued waiting
	for i := range n {
		q.push(snapshot{ts: time.Unix(0, int64(i))}, publish)
	}
	pushed := make(chan struct{})
	go func() { q.push(snapshot{ts: time.Unix(0, int64(n))}, publish); close(pushed) }()
	select {
	case <-pushed:
		t.Fatalf("a push beyond %d queued snapshots did not wait", maxQueued)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-pushed
	q.flush()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n+1 {
		t.Fatalf("%d snapshots published after flush, want %d", len(got), n+1)
	}
	for i, ts := range got {
		if ts != int64(i) {
			t.Fatalf("published in order %v", got)
		}
	}
}
