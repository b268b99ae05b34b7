package lb

// Helpers every scheme needs, so that modules hash and draw as the
// engine's built-in ECMP does: deterministically for a run's seed.

// Mix is a 64-bit finaliser (splitmix64): nearby inputs spread evenly.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// ECMP is ECMP's choice among n equal-cost links for a 5-tuple hash at a
// switch with hash seed salt: the engine's default forwarding.
func ECMP(hash, salt uint64, n int) int { return int(Mix(hash^salt) % uint64(n)) }

// Rand is a xorshift64* stream; the zero value is not valid (use NewRand).
type Rand struct{ s uint64 }

// NewRand is a stream from a non-zero seed (0 is replaced).
func NewRand(seed uint64) Rand {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return Rand{seed}
}

// Next is the stream's next value mixed with salt (e.g. the switch's).
func (r *Rand) Next(salt uint64) uint64 {
	x := r.s
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	r.s = x
	return Mix(x*2685821657736338717 ^ salt)
}
