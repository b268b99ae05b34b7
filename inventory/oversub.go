package inventory

// Oversubscription is the lab's worst leaf (ToR) ratio of host-facing to
// fabric-facing capacity: 2 for a leaf of 16 hosts at 100 Gb/s with 8
// uplinks at 100 Gb/s, 1 for a non-blocking fabric (and for a lab with no
// leaf that has both). The papers' simulators state load against the
// network's capacity: a host offers load / Oversubscription of its link.
func (l *Lab) Oversubscription() float64 {
	host := map[string]bool{}
	for _, h := range l.Hosts {
		host[h.Name] = true
	}
	leaf := map[string]bool{}
	for _, s := range l.Leaves() {
		leaf[s.Name] = true
	}
	down, up := map[string]float64{}, map[string]float64{}
	for _, k := range l.Links {
		for _, e := range []struct{ end, far LinkEnd }{{k.A, k.B}, {k.B, k.A}} {
			if !leaf[e.end.Device] {
				continue
			}
			if host[e.far.Device] {
				down[e.end.Device] += l.LinkSpeedGbps(k)
			} else {
				up[e.end.Device] += l.LinkSpeedGbps(k)
			}
		}
	}
	worst := 1.0
	for s, d := range down {
		if u := up[s]; u > 0 && d/u > worst {
			worst = d / u
		}
	}
	return worst
}
