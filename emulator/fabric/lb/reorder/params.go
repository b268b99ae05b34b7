package reorder

import "github.com/labctl/labctl/emulator/fabric/lb"

// Params are the module parameters of Config, for the schemes that
// reorder with this package to declare; ConfigOf reads them back.
func Params() []lb.Param {
	return []lb.Param{
		{Name: "reorder_margin_us", Kind: lb.Float, Default: "8", Unit: "us", Above: true,
			Help: "added to a reorder queue's predicted release (the tail's expected arrival) before the queue is let go without the tail (ConWeave's code: 8 us)"},
		{Name: "reorder_wait_us", Kind: lb.Float, Default: "200", Unit: "us", Above: true,
			Help: "predicted wait for the tail when no old-path packet of the reroute has been seen to time it by (ConWeave's code: 200 us)"},
	}
}

// ConfigOf is the Config of validated parameters that include Params.
func ConfigOf(p lb.Params) Config {
	return Config{MarginNs: p.Nanos("reorder_margin_us"), DefaultWaitNs: p.Nanos("reorder_wait_us")}
}
