//go:build amd64 || arm64

package fabric

import "unsafe"

// prefetch asks the CPU to bring the cache line at p into its caches and
// returns at once: unlike a load, it neither waits for the line nor holds
// back the instructions after it (a load that misses must complete before
// it retires, so a read ahead with plain loads still stalls the core once
// its reorder buffer fills). A hint only: p may be any address, even an
// invalid one, and nothing is read into the program. Go has no public
// prefetch intrinsic, hence the assembly (prefetch_amd64.s,
// prefetch_arm64.s); prefetch_other.go is a no-op for other architectures.
//
//go:noescape
func prefetch(p unsafe.Pointer)

// prefetch2 is two prefetches for the cost of one call.
//
//go:noescape
func prefetch2(p, q unsafe.Pointer)
