package flb

import (
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Register adds FLB to r.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "flb", New: New,
		Help: "per-packet rerouting onto faster paths only where the gap rules out reordering (one-way delays between ToRs), and congested flows isolated onto few paths on CNMs relayed back to the source ToR",
		Params: []lb.Param{
			{Name: "entry_timeout_us", Kind: lb.Float, Default: "1000", Unit: "us", Above: true,
				Help: "flow and isolation entries not hit for this long are removed (the paper's example, 1 ms)"},
			{Name: "sample_rtts", Kind: lb.Float, Default: "2", Above: true,
				Help: "the source ToR stamps one packet per path every this many base RTTs, the base RTT twice the least one-way delay seen (the paper's default, 2)"},
			{Name: "aging_tick_us", Kind: lb.Float, Default: "1", Unit: "us", Above: true,
				Help: "a flow's aging counter counts up every tick (8 bits, as in the paper's flow entry); the gap a reroute may use is (count-1) ticks, a lower bound; the paper gives no tick, the default won a sweep (docs/fabric-twin.md, FLB)"},
			{Name: "stamp_at", Kind: lb.Choice, Default: "arrival", Choices: []string{"arrival", "departure"},
				Help: "where the source ToR stamps a sample: as the packet enters it (the delay then includes its own uplink queue, which a reroute there jumps too) or as it leaves (the paper's wording); the default won a sweep on reordering (docs/fabric-twin.md, FLB)"},
			{Name: "local_queue", Kind: lb.Bool, Default: "false",
				Help: "a path's delay is at least its uplink queue here, now, drained at line rate (a twin addition, not the paper's: fed-back samples lag a queue that builds or a PFC pause; on the WebSearch 0.8 benchmark it doubled reroutes and raised reordering by half, so it is off; docs/fabric-twin.md, FLB)"},
			{Name: "delay_age_us", Kind: lb.Float, Default: "1000", Unit: "us", Above: true,
				Help: "a path delay not refreshed for this long counts as 0, so a path left for being slow is tried again (CONGA's remote-metric aging; the paper gives no value: the entry timeout's)"},
			{Name: "k_mode", Kind: lb.Choice, Default: "bound", Choices: []string{"bound", "fixed20", "fixed30", "bytes"},
				Help: "isolation threshold K: bound (Appendix A's conservative range for the PFC threshold, at k_pos), fixed20/fixed30 (20 %/30 % of buffer_kb, the paper's fixed ones), bytes (k_kb)"},
			{Name: "pfc_kb", Kind: lb.Float, Default: "512", Unit: "KiB", Above: true,
				Help: "Q_PFC, the lab's ingress PFC (XOFF) threshold the bound keeps K under (the twin's default XoffBytes)"},
			{Name: "buffer_kb", Kind: lb.Float, Default: "12288", Unit: "KiB", Above: true,
				Help: "the switch's shared buffer, for the fixed K options (the twin's default)"},
			{Name: "bound_n", Kind: lb.Int, Default: "1", Min: 1,
				Help: "n of the bound: egress queues one ingress queue feeds in the worst case; K < Q_PFC/n - 2dC(n-1)"},
			{Name: "k_pos", Kind: lb.Float, Default: "0.5", Min: 0, Max: 1,
				Help: "where K lies in the bound's range [2dC, Q_PFC/n - 2dC(n-1)): 0 its lower end, 1 its upper; the paper sets K in the range without a number; the default won a sweep (docs/fabric-twin.md, FLB)"},
			{Name: "k_kb", Kind: lb.Float, Default: "100", Unit: "KiB", Above: true,
				Help: "K with k_mode=bytes"},
			{Name: "check_us", Kind: lb.Float, Default: "100", Unit: "us", Above: true,
				Help: "how often a source ToR sweeps its isolation table for entries to time out (the paper checks periodically, no period given)"},
			{Name: "cnm_bytes", Kind: lb.Int, Default: "64", Min: 64, Max: 1500,
				Help: "a CNM's size on the wire (a QCN CNM fits a minimum frame)"},
			{Name: "notify_hosts", Kind: lb.Bool, Default: "true",
				Help: "the source ToR forwards CNMs to the sending host (FLB+RC's host module acts on them; without one they cost a 64-byte frame)"},
		}})
}

// config is what every switch's FLB shares.
type config struct {
	entryAge, tick, delayAge, check int64 // ns
	sampleRTTs                      float64
	stampDeparture, localQueue      bool
	kMode                           string
	pfc, buffer, kBytes             int64 // bytes
	boundN                          int
	kPos                            float64
	cnmBytes                        int
	notifyHosts                     bool
}

const seed = 0x2545f4914f6cdd1d

// New makes an FLB module.
func New(p lb.Params) (lb.Module, error) {
	c := config{entryAge: p.Nanos("entry_timeout_us"), tick: max(p.Nanos("aging_tick_us"), 1),
		delayAge: p.Nanos("delay_age_us"), check: max(p.Nanos("check_us"), 1),
		sampleRTTs: p.Float("sample_rtts"), stampDeparture: p.String("stamp_at") == "departure", localQueue: p.Bool("local_queue"), kMode: p.String("k_mode"),
		pfc: int64(p.Float("pfc_kb") * 1024), buffer: int64(p.Float("buffer_kb") * 1024), kBytes: int64(p.Float("k_kb") * 1024),
		boundN: p.Int("bound_n"), kPos: p.Float("k_pos"), cnmBytes: p.Int("cnm_bytes"), notifyHosts: p.Bool("notify_hosts")}
	if c.kMode == "bytes" && c.kBytes < 1 {
		return nil, fmt.Errorf("k_kb %v: want at least a byte", p.Float("k_kb"))
	}
	return &Module{c: c, rng: lb.NewRand(seed)}, nil
}
