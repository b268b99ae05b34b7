package reports

import "github.com/labctl/labctl/inventory"

// idealer gives flows' ideal FCTs from the archived lab snapshot, caching
// the path of each host pair (bounded: it starts over when full).
type idealer struct {
	lab      *inventory.Lab
	paths    *inventory.Paths
	mtu, hdr int
	cache    map[[2]string][]inventory.PathLink // nil value: no path
}

const idealCacheMax = 1 << 16

func newIdealer(lab *inventory.Lab, mtu, hdr int) *idealer {
	d := &idealer{lab: lab, mtu: mtu, hdr: hdr, cache: map[[2]string][]inventory.PathLink{}}
	if lab != nil {
		d.paths, _ = inventory.NewPaths(lab) // nil on a link of unknown speed: no ideal FCTs
	}
	return d
}

// forPoint is the ideal-FCT function of a point: none when the run has no
// usable lab snapshot or the point ran on another lab than the snapshot's.
func (d *idealer) forPoint(pm PointMeta) func(src, dst string, bytes int64) (int64, bool) {
	if d.paths == nil || (pm.Lab != "" && pm.Lab != d.lab.Name) {
		return func(string, string, int64) (int64, bool) { return 0, false }
	}
	var lastKey [2]string
	var lastPath []inventory.PathLink
	return func(src, dst string, bytes int64) (int64, bool) {
		k := [2]string{src, dst}
		if k != lastKey || lastPath == nil {
			p, ok := d.cache[k]
			if !ok {
				p, _ = d.paths.Shortest(src, dst) // nil: not hosts of the lab, or no path
				if len(d.cache) >= idealCacheMax {
					clear(d.cache)
				}
				d.cache[k] = p
			}
			lastKey, lastPath = k, p
		}
		if lastPath == nil {
			return 0, false
		}
		id := inventory.IdealFCT(bytes, d.mtu, d.hdr, lastPath)
		return id, id > 0
	}
}
