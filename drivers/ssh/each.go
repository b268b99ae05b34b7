package ssh

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Progress hears about devices as they finish: which one, how many are
// done and of how many. nil is silent.
type Progress func(device string, done, total int)

// Each runs fn for every target, at most the pool's MaxParallel at once,
// and returns what fn returned for each in target order, whatever order
// they finish in: out[i] and errs[i] belong to ts[i]. An error names its
// device (fn's error is prefixed with "device NAME" unless it already says
// so). A target not started because ctx ended first has the zero T and an
// error saying so. progress hears each target that ran as it finishes.
//
// It is the one bounded, ordered fan-out over devices: ForEach and the
// drivers' per-device loops are built on it.
func Each[T any](ctx context.Context, p *Pool, ts []Target, progress Progress, fn func(context.Context, Target) (T, error)) (out []T, errs []error) {
	out, errs = make([]T, len(ts)), make([]error, len(ts))
	sem := make(chan struct{}, p.cfg.MaxParallel)
	var mu sync.Mutex // serialises progress
	done := 0
	var wg sync.WaitGroup
	for i, t := range ts {
		acquired := false
		if ctx.Err() == nil { // select alone would pick at random when both are ready
			select {
			case sem <- struct{}{}:
				acquired = true
			case <-ctx.Done():
			}
		}
		if !acquired {
			errs[i] = fmt.Errorf("device %s: not started: %w", t.Name, ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := fn(ctx, t)
			if err != nil && !strings.Contains(err.Error(), "device "+t.Name) {
				err = fmt.Errorf("device %s: %w", t.Name, err)
			}
			out[i], errs[i] = v, err
			if progress != nil {
				mu.Lock()
				done++
				progress(t.Name, done, len(ts))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, errs
}

// MaxParallel is how many devices Each and ForEach work on at once.
func (p *Pool) MaxParallel() int { return p.cfg.MaxParallel }
