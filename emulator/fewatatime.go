package emulator

import (
	"iter"
	"runtime"
	"sync"
)

// fewAtATime runs fn for each pair of all, a few at a time (twice the
// cores: the work is CPU and file system calls), and returns when every
// one has returned. Lab start writes the switches' boot files with it
// (bootFilesAll), the twin hands each sample to the switches' endpoints
// (Twin.publish).
func fewAtATime[K, V any](all iter.Seq2[K, V], fn func(K, V)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	for k, v := range all {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(k, v)
		})
	}
	wg.Wait()
}
