package selb

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Register adds SELB to r. The paper gives neither θ (nor its units), k
// nor the clustering period: their defaults (k 4, 1 us, 2000 bytes/us)
// come from the sweep in docs/fabric-twin.md. The reordering parameters
// and θ_inactive are ConWeave's, whose destination ToR SELB reuses.
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "selb", New: New,
		Help: "k-means path clusters by queue length at the source ToR, reroute on queue growth within the cluster, in-network reordering at the destination ToR",
		Params: append([]lb.Param{
			{Name: "k", Kind: lb.Int, Default: "4", Min: 1, Max: 64,
				Help: "clusters of paths (Algorithm 1's k); fewer when the uplinks' queues take fewer distinct values"},
			{Name: "period_us", Kind: lb.Float, Default: "1", Unit: "us", Above: true,
				Help: "how often the source ToR samples its uplinks' egress queues, computes their growth and re-clusters the paths"},
			{Name: "theta", Kind: lb.Float, Default: "2000", Unit: "bytes/us", Min: 0,
				Help: "θ: a path is congested when its uplink's egress queue (all priorities) grew faster than this over the last period (a 100 Gb/s link drains 12500 bytes/us)"},
			{Name: "inactive_us", Kind: lb.Float, Unit: "us", Default: "300", Above: true,
				Help: "a flow idle this long is placed afresh (new epoch, no reordering); ConWeave's θ_inactive"},
			{Name: "ctrl_bytes", Kind: lb.Int, Unit: "bytes", Default: "64", Min: 64, Max: 1500,
				Help: "size on the wire of the CLEAR the destination ToR sends when a rerouted flow's tail arrives"},
		}, reorder.Params()...)})
}

// New makes a SELB module from validated parameters.
func New(p lb.Params) (lb.Module, error) {
	return &Module{
		k: p.Int("k"), theta: p.Float("theta"), ctrlBytes: p.Int("ctrl_bytes"),
		periodNs:   max(int64(p.Float("period_us")*1000), 1),
		inactiveNs: p.Nanos("inactive_us"),
		dest:       reorder.New(reorder.ConfigOf(p)),
		rng:        lb.NewRand(seed),
	}, nil
}

const seed = 0x5e1b5eed
