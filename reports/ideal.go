package reports

import "github.com/labctl/labctl/inventory"

// idealer gives flows' ideal FCTs from one archived lab snapshot, caching
// the path of each host pair (bounded: it starts over when full).
type idealer struct {
	lab      *inventory.Lab
	paths    *inventory.Paths
	mtu, hdr int
	cache    map[string]map[string][]inventory.PathLink // src -> dst -> path; nil: no path
	cached   int
}

const idealCacheMax = 1 << 16

func newIdealer(lab *inventory.Lab, mtu, hdr int) *idealer {
	d := &idealer{lab: lab, mtu: mtu, hdr: hdr, cache: map[string]map[string][]inventory.PathLink{}}
	if lab != nil {
		d.paths, _ = inventory.NewPaths(lab) // nil on a link of unknown speed: no ideal FCTs
	}
	return d
}

// forPoint is the ideal-FCT function of a point that ran on the lab:
// none when the lab is unknown (nil) or has no usable snapshot.
func (d *idealer) forPoint() func(src, dst string, bytes int64) (int64, bool) {
	if d.paths == nil {
		return func(string, string, int64) (int64, bool) { return 0, false }
	}
	var lastSrc, lastDst string
	var lastPath []inventory.PathLink
	return func(src, dst string, bytes int64) (int64, bool) {
		// Two string-keyed maps: cheaper per row than one keyed by the pair.
		if src != lastSrc || dst != lastDst || lastPath == nil {
			byDst := d.cache[src]
			p, ok := byDst[dst]
			if !ok {
				p, _ = d.paths.Shortest(src, dst) // nil: not hosts of the lab, or no path
				if d.cached >= idealCacheMax {
					clear(d.cache)
					d.cached, byDst = 0, nil
				}
				if byDst == nil {
					byDst = map[string][]inventory.PathLink{}
					d.cache[src] = byDst
				}
				byDst[dst] = p
				d.cached++
			}
			lastSrc, lastDst, lastPath = src, dst, p
		}
		if lastPath == nil {
			return 0, false
		}
		id := inventory.IdealFCT(bytes, d.mtu, d.hdr, lastPath)
		return id, id > 0
	}
}
