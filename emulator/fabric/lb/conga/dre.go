package conga

import "math"

// dre is a discounting rate estimator of one link: x counts the bytes
// sent, and at every multiple of the period since the run started it is
// multiplied by 1-α. The decay is applied lazily, when the estimator is
// next touched, so that idle links cost nothing; the result is the same
// as a timer sweeping all links each period.
type dre struct {
	x     float64 // bytes
	epoch int64   // the period x was last decayed to
}

// dreConfig is what every link's estimator shares.
type dreConfig struct {
	period int64   // T_dre, ns
	keep   float64 // 1-α
	levels float64 // 2^Q
}

// tau is the estimator's time constant T_dre/α in ns: x ≈ rate × tau.
func (c dreConfig) tau() float64 { return float64(c.period) / (1 - c.keep) }

// at decays x to time now (ns).
func (d *dre) at(c dreConfig, now int64) {
	ep := now / c.period
	if k := ep - d.epoch; k > 0 {
		if d.x != 0 {
			d.x *= math.Pow(c.keep, float64(k))
		}
		d.epoch = ep
	}
}

// add counts bytes sent at time now.
func (d *dre) add(c dreConfig, now int64, bytes int32) {
	d.at(c, now)
	d.x += float64(bytes)
}

// metric is x quantised to Q bits relative to a link of gbps:
// floor(2^Q × x / (capacity × tau)), at most 2^Q-1.
func (d *dre) metric(c dreConfig, gbps float64) int32 {
	full := gbps / 8 * c.tau() // bytes the link sends in tau ns
	q := int32(d.x / full * c.levels)
	return min(q, int32(c.levels)-1)
}
