package gemma

import (
	"fmt"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Register adds Gemma to r. The paper gives none of these values: the
// defaults come from the sweep in docs/fabric-twin.md (Gemma), the
// reordering ones from ConWeave's code, whose mechanism Gemma's
// destination side is.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "gemma", New: New,
		Help: "per-packet path score from local and core-reported egress queues at the source edge, reordering with paused queues at the destination edge",
		Params: append([]lb.Param{
			{Name: "alpha", Kind: lb.Float, Default: "1", Min: 0,
				Help: "α: weight of L1, the source edge's uplink queue toward the path's core, in PathScore"},
			{Name: "beta", Kind: lb.Float, Default: "1", Min: 0,
				Help: "β: weight of L2, the core's reported queue toward the destination edge, in PathScore"},
			{Name: "ref_kb", Kind: lb.Float, Default: "100", Unit: "KB", Above: true,
				Help: "reference queue: PathScore = (α·L1 + β·L2) / ref_kb, so S_reroute is a fraction of it (the default is the twin's ECN Kmin)"},
			{Name: "s_reroute", Kind: lb.Float, Default: "1", Above: true,
				Help: "S_reroute: a path scoring this or more is congested, below it smooth"},
			{Name: "gap", Kind: lb.Float, Default: "0.25", Min: 0,
				Help: "second threshold, in score units: a congested flow may also move to a path scoring more than this below its own"},
			{Name: "report_min_us", Kind: lb.Float, Default: "2", Unit: "us", Above: true,
				Help: "shortest period of a core's queue reports (while its queues toward the edges change)"},
			{Name: "report_max_us", Kind: lb.Float, Default: "8", Unit: "us", Above: true,
				Help: "longest period of a core's queue reports (while its queues stay steady); at least report_min_us"},
			{Name: "report_change_kb", Kind: lb.Float, Default: "10", Unit: "KB", Min: 0,
				Help: "a core queue that moved this much since the last report halves the period; otherwise it doubles, within the bounds"},
			{Name: "scan_us", Kind: lb.Float, Default: "10", Unit: "us", Above: true,
				Help: "interval of the edge's scan of its downlink congestion table; an entry no report refreshed for 2 × report_max_us is cleared"},
			{Name: "clear_timeout_us", Kind: lb.Float, Default: "300", Unit: "us", Above: true,
				Help: "a reroute whose CLEAR (the destination saw the old path's tail) has not come within this is taken as over"},
			{Name: "ctrl_bytes", Kind: lb.Int, Default: "64", Unit: "bytes", Min: 64, Max: 1500,
				Help: "size on the wire of queue reports and CLEARs"},
		}, reorder.Params()...)})
}

// New makes a Gemma module from validated parameters.
func New(p lb.Params) (lb.Module, error) {
	m := &Module{
		score: Scorer{Alpha: p.Float("alpha"), Beta: p.Float("beta"), RefBytes: p.Float("ref_kb") * 1000,
			SReroute: p.Float("s_reroute"), Gap: p.Float("gap")},
		period:    Period{MinNs: p.Nanos("report_min_us"), MaxNs: p.Nanos("report_max_us"), ChangeBytes: int64(p.Float("report_change_kb") * 1000)},
		scanNs:    p.Nanos("scan_us"),
		clearNs:   p.Nanos("clear_timeout_us"),
		ctrlBytes: p.Int("ctrl_bytes"),
		dest:      reorder.New(reorder.ConfigOf(p)),
		rng:       lb.NewRand(seed),
	}
	if m.period.MaxNs < m.period.MinNs {
		return nil, fmt.Errorf("report_max_us (%g) is below report_min_us (%g)", p.Float("report_max_us"), p.Float("report_min_us"))
	}
	return m, nil
}

const seed = 0x6e33a5eed
