package reorder

import "github.com/labctl/labctl/emulator/fabric/lb"

// Params declare Config's fields as module parameters, with ConWeave's
// code's defaults, for every scheme that reorders with a Dest.
func Params() []lb.Param {
	return []lb.Param{
		{Name: "reorder_margin_us", Kind: lb.Float, Default: "8", Unit: "us", Above: true,
			Help: "added to a reorder queue's predicted release (the tail's expected arrival) before the queue is let go without the tail"},
		{Name: "reorder_wait_us", Kind: lb.Float, Default: "200", Unit: "us", Above: true,
			Help: "predicted wait for the tail when no old-path packet of the epoch has been seen to time it by"},
	}
}

// ConfigOf is the Config that validated parameters declared by Params
// give.
func ConfigOf(p lb.Params) Config {
	us := func(n string) int64 { return int64(p.Float(n) * 1000) }
	return Config{MarginNs: us("reorder_margin_us"), DefaultWaitNs: us("reorder_wait_us")}
}
