package reunion

import (
	"math"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Register adds Reunion to r. t and s are the paper's defaults; the FTV
// is its example of a large fallback; ε and δ give its sketch (2000 × 7);
// the decay, which the paper leaves out, is chosen by the sweep in
// docs/fabric-twin.md.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "reunion", New: New,
		Help: "elephants found by a Count-Min Sketch at the source ToR; the destination ToR names one flow per colliding link and its source ToR moves it to a path with fewer than t elephants",
		Params: []lb.Param{
			{Name: "interval_us", Kind: lb.Float, Default: "1000", Unit: "us", Above: true,
				Help: "s: the statistics interval: ports count elephants, destinations notify and sources reroute once per interval (the paper: 1000; its robustness test 250-2500)"},
			{Name: "tolerance", Kind: lb.Int, Default: "1", Min: 1, Max: 16,
				Help: "t: the most elephants one link may carry in an interval (the paper: 1; the number of slices when flows are sliced)"},
			{Name: "high_util", Kind: lb.Choice, Default: "ge", Choices: []string{"ge", "gt"},
				Help: "a link is highly utilised, and avoided by reroutes, with >= t elephants (ge: the paper's text) or > t (gt: its Algorithm 1)"},
			{Name: "cms_epsilon", Kind: lb.Float, Default: "0.001", Above: true, Max: 1,
				Help: "ε: the sketch is ceil(2/ε) counters wide (the paper's example: 2000)"},
			{Name: "cms_delta", Kind: lb.Float, Default: "0.01", Above: true, Max: 1,
				Help: "δ: the sketch has ceil(log2(1/δ)) rows, so an estimate exceeds the count by more than ε·N with probability below δ (the paper's example: 7)"},
			{Name: "cms_decay", Kind: lb.Float, Default: "0.25", Min: 0, Max: 1,
				Help: "share of every sketch counter dropped at each interval's end, so that finished elephants leave the hot set (not in the paper; 1: reset every interval; default from a sweep, docs/fabric-twin.md)"},
			{Name: "flowlet_timeout_us", Kind: lb.Float, Default: "500", Unit: "us", Above: true,
				Help: "the fallback: a gap longer than this moves a flow (mice above all) to a random path (the paper: large, e.g. LetFlow's 500)"},
			{Name: "ctrl_bytes", Kind: lb.Int, Default: "64", Unit: "bytes", Min: 64, Max: 1500,
				Help: "size on the wire of a notification"},
		}})
}

// Module is Reunion on every switch it is given (tables keyed by
// Switch.ID): the source ToR's logic in Select, Receive and Tick, every
// switch's collision check and the destination ToR's tables in Arrive.
type Module struct {
	intervalNs, ftvNs int64
	t                 int
	gt                bool
	eps, delta        float64
	keep              uint64 // of 1024, per interval
	ctrlBytes         int

	rng   lb.Rand
	sws   []*swState
	ports portCounts
	paths pathElephants
	ctl   lb.Header // a notification's header, reused: Send copies it
	stats Stats
}

// Stats count what the module did in the current run.
type Stats struct {
	DataPkts, ElephantPkts int64 // data packets leaving their source ToR, and of them marked elephant
	Elephants              int64 // flows ever marked elephant
	Marked                 int64 // packets given a bottleneck link
	Notifies, CtrlBytes    int64 // notifications sent, and their bytes on the wire
	Reroutes               int64 // flows moved by a notification (Algorithm 2)
	NoPath                 int64 // flows named by a notification with no path to take
	Flowlets               int64 // fallback moves: flows that changed path after a gap longer than the FTV
}

// Stats are the counters of the current run.
func (m *Module) Stats() Stats { return m.stats }

// New makes a Reunion module from validated parameters.
func New(p lb.Params) (lb.Module, error) {
	return &Module{
		intervalNs: max(p.Nanos("interval_us"), 1), ftvNs: p.Nanos("flowlet_timeout_us"),
		t: p.Int("tolerance"), gt: p.String("high_util") == "gt",
		eps: p.Float("cms_epsilon"), delta: p.Float("cms_delta"),
		keep:      uint64(math.Round((1 - p.Float("cms_decay")) * 1024)),
		ctrlBytes: p.Int("ctrl_bytes"),
		rng:       lb.NewRand(seed),
	}, nil
}

const seed = 0x2e0710

// tickInterval is the interval timer's argument.
const tickInterval = 1
