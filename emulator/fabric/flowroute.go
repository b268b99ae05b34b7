package fabric

// router routes every flow of a run as Topology.path does, on integer
// node ids and per-destination distance arrays instead of maps of names
// (routing was a quarter of a run at 432 hosts, and a sixth of the flow
// engine's at 1,024 through Topology.pathVia's callbacks by name).
type router struct {
	topo    *Topology
	id      map[string]int
	from    []int // per directed link: id of its sending end
	to      []int // per directed link: id of its receiving end
	out, in [][]int
	host    []bool
	salts   []uint64
	dist    [][]int16 // per destination id: hops from each node, -1: none; nil until asked (small: a run reads one per flow)
	tor     []int     // per node: a single-homed host's switch (Topology.homeSwitch), else -1
	p       []int     // the last path, returned by path
}

func newRouter(t *Topology, seed int64) *router {
	r := &router{topo: t, id: map[string]int{}, from: make([]int, len(t.links)), to: make([]int, len(t.links))}
	node := func(n string) int {
		i, ok := r.id[n]
		if !ok {
			i = len(r.out)
			r.id[n] = i
			r.out = append(r.out, t.out[n])
			r.host = append(r.host, t.isHost[n])
			r.salts = append(r.salts, switchSalt(n, seed))
		}
		return i
	}
	for li, l := range t.links {
		r.from[li], r.to[li] = node(l.from), node(l.to)
	}
	r.dist = make([][]int16, len(r.out))
	r.tor = make([]int, len(r.out))
	r.in = make([][]int, len(r.out))
	for li, to := range r.to {
		r.in[to] = append(r.in[to], li)
	}
	for name, n := range r.id {
		r.tor[n] = -1
		if home, ok := t.homeSwitch(name); ok && r.host[n] {
			r.tor[n] = r.id[home]
		}
	}
	return r
}

// path is Topology.path of f; the slice is valid until the next call.
// Anything but two distinct hosts joined by a path goes to Topology.pathVia,
// which names the error.
func (r *router) path(f Flow) ([]int, error) {
	src, sok := r.id[f.Src]
	dst, dok := r.id[f.Dst]
	if !sok || !dok || src == dst || !r.host[src] || !r.host[dst] {
		return r.topo.path(f, 0) // an error: the salts do not matter
	}
	// Toward a single-homed host every path crosses its switch: hop counts
	// to that switch (one array per switch, not per host: a run's flows
	// reach every host) are one less than to the host, everywhere but at
	// the host and the switch itself, where the host's own links are next.
	to := dst
	if t := r.tor[dst]; t >= 0 {
		to = t
	}
	d := r.dist[to]
	if d == nil {
		d = r.distances(to)
		r.dist[to] = d
	}
	key := flowKey(f.Src, f.Dst, f.ID)
	r.p = r.p[:0]
	for n := src; n != dst; {
		// ECMP among the links one hop closer, in link order (nextHops).
		var cands [8]int
		c := cands[:0]
		if n == to && to != dst {
			for _, li := range r.out[n] {
				if r.to[li] == dst {
					c = append(c, li)
				}
			}
		} else {
			closer := d[n] - 1
			for _, li := range r.out[n] {
				if d[r.to[li]] == closer {
					c = append(c, li)
				}
			}
		}
		if len(c) == 0 { // only at the source: the others are closer
			return r.topo.path(f, 0)
		}
		li := c[ecmpPick(key, r.salts[n], len(c))]
		r.p = append(r.p, li)
		n = r.to[li]
	}
	return r.p, nil
}

// distances is Topology.distances on node ids: hop counts to dst (-1: no
// path), never forwarding through another host.
func (r *router) distances(dst int) []int16 {
	d := make([]int16, len(r.out))
	for i := range d {
		d[i] = -1
	}
	d[dst] = 0
	queue := []int{dst}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != dst && r.host[n] {
			continue
		}
		for _, li := range r.in[n] {
			if from := r.from[li]; d[from] < 0 {
				d[from] = d[n] + 1
				queue = append(queue, from)
			}
		}
	}
	return d
}
