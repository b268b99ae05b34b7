package conweave

import (
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/reorder"
)

// Register adds ConWeave to r. The defaults are the paper's 2-tier
// settings (θ_reply, θ_path_busy, θ_inactive) and, where the paper gives
// none, its authors' ns-3 code's (samples, reorder margin and wait).
func Register(r *lb.Registry) error {
	return r.Register(lb.Scheme{Name: "conweave", New: New,
		Help: "RTT-triggered rerouting at the source ToR, in-network reordering at the destination ToR",
		Params: append([]lb.Param{
			{Name: "reply_us", Kind: lb.Float, Default: "8", Unit: "us", Above: true,
				Help: "θ_reply: an RTT request's reply later than this (from the request leaving the source ToR) reroutes the flow; base ToR-to-ToR RTT plus a margin (the code: base RTT + 4 us)"},
			{Name: "path_busy_us", Kind: lb.Float, Default: "8", Unit: "us",
				Help: "θ_path_busy: how long a path the destination ToR reported ECN-marked (NOTIFY) is not chosen"},
			{Name: "inactive_us", Kind: lb.Float, Default: "300", Unit: "us", Above: true,
				Help: "θ_inactive: a flow idle this long starts a new epoch on a sampled path, without reordering"},
			{Name: "samples", Kind: lb.Int, Default: "2", Min: 1, Max: 64,
				Help: "paths sampled at random per reroute; the first not busy is taken, none: the flow stays"},
			{Name: "path_aware", Kind: lb.Bool, Default: "true",
				Help: "send NOTIFY for ECN-marked packets and avoid busy paths (false: reroute to any sampled path)"},
			{Name: "ctrl_bytes", Kind: lb.Int, Default: "64", Unit: "bytes", Min: 64, Max: 1500,
				Help: "size on the wire of RTT_REPLY, CLEAR and NOTIFY control packets"},
		}, reorder.Params()...)})
}

// New makes a ConWeave module from validated parameters.
func New(p lb.Params) (lb.Module, error) {
	return &Module{
		replyNs: p.Nanos("reply_us"), busyNs: p.Nanos("path_busy_us"), inactiveNs: p.Nanos("inactive_us"),
		samples: p.Int("samples"), pathAware: p.Bool("path_aware"), ctrlBytes: p.Int("ctrl_bytes"),
		dest: reorder.New(reorder.ConfigOf(p)),
		rng:  lb.NewRand(seed),
	}, nil
}

const seed = 0xc0de5eed
