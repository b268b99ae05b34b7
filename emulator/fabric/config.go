package fabric

// Config holds the twin's fabric parameters. Defaults follow the papers'
// ns-3 settings where they give one (seeds digest: 100 Gb/s, 1 us links,
// 12 MB switch buffers, DCQCN ECN thresholds 100 KB / 400 KB / 0.2).
type Config struct {
	Seed int64
	// MTU is the payload per packet.
	MTU int
	// HeaderBytes is the wire overhead per packet: Ethernet 14 + IPv4 20 +
	// UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62, plus preamble and inter-frame
	// gap 20 = 82. (RETH on the first packet of a message is ignored.)
	HeaderBytes int
	// PFC makes the RoCE priority lossless.
	PFC bool
	// XoffBytes is the egress-queue depth at which the switch pauses the
	// ingress ports feeding it (a stand-in for per-ingress accounting in
	// this engine); XonBytes where it would resume.
	XoffBytes, XonBytes int64
	// BufferBytes is a switch's shared buffer.
	BufferBytes int64
	// DropBytes is the depth at which a lossy queue drops (dynamic
	// threshold alpha=1 with half the buffer free: BufferBytes/2).
	DropBytes int64
	// ECN marking (RED on the instantaneous depth): probability 0 below
	// Kmin, rising linearly to Pmax at Kmax, 1 above.
	ECNKminBytes, ECNKmaxBytes int64
	ECNPmax                    float64
	// PauseQuantaNs is how often a paused link sees a refreshed PAUSE
	// frame: half of 65535 quanta of 512 bit times at 100 Gb/s ~ 168 us;
	// switches refresh well before expiry.
	PauseQuantaNs int64
}

// DefaultConfig is the twin's default fabric.
func DefaultConfig() Config {
	return Config{
		MTU: 4096, HeaderBytes: 82, PFC: true,
		XoffBytes: 512 << 10, XonBytes: 384 << 10,
		BufferBytes: 12 << 20, DropBytes: 6 << 20,
		ECNKminBytes: 100_000, ECNKmaxBytes: 400_000, ECNPmax: 0.2,
		PauseQuantaNs: 168_000,
	}
}
