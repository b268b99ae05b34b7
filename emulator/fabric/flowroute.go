package fabric

// router routes every flow of a run as Topology.path does, on integer
// node ids and per-destination distance arrays instead of maps of names
// (routing was a quarter of a run at 432 hosts).
type router struct {
	topo     *Topology
	id       map[string]int
	from, to []int // per directed link: ids of its ends
	out, in  [][]int
	host     []bool
	salts    []uint64
	dist     map[string][]int // per destination: hops from each node, -1: none
	cands    []int            // scratch
	// the flow being routed: its destination's distances, and the node
	// nextHops last resolved (salt asks for the same one next)
	d        []int
	lastName string
	lastID   int
}

func newRouter(t *Topology, seed int64) *router {
	r := &router{topo: t, id: map[string]int{}, from: make([]int, len(t.links)), to: make([]int, len(t.links)), dist: map[string][]int{}}
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
	return r
}

func (r *router) path(f Flow) ([]int, error) {
	d, ok := r.dist[f.Dst]
	if _, known := r.id[f.Dst]; !ok && known { // pathVia rejects unknown hosts
		d = r.distances(f.Dst)
		r.dist[f.Dst] = d
	}
	r.d = d
	return r.topo.pathVia(f, r.nextHops, r.salt)
}

// nextHops is Topology.nextHops toward the destination of the flow being
// routed; the result is valid until the next call.
func (r *router) nextHops(n, _ string) []int {
	d := r.d
	ni := r.id[n]
	r.lastName, r.lastID = n, ni
	r.cands = r.cands[:0]
	for _, li := range r.out[ni] {
		if dn := d[r.to[li]]; dn >= 0 && dn == d[ni]-1 {
			r.cands = append(r.cands, li)
		}
	}
	return r.cands
}

func (r *router) salt(n string) uint64 {
	if n == r.lastName {
		return r.salts[r.lastID]
	}
	return r.salts[r.id[n]]
}

// distances is Topology.distances on node ids: hop counts to dst (-1: no
// path), never forwarding through another host.
func (r *router) distances(dst string) []int {
	if r.in == nil {
		r.in = make([][]int, len(r.out))
		for li, to := range r.to {
			r.in[to] = append(r.in[to], li)
		}
	}
	d := make([]int, len(r.out))
	for i := range d {
		d[i] = -1
	}
	di := r.id[dst]
	d[di] = 0
	queue := append(r.cands[:0], di)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != di && r.host[n] {
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
