package fabric

import "github.com/labctl/labctl/emulator/fabric/lb"

// Source routing: the shortest paths between two switches, enumerated once
// per pair in link order (so that a path ID means the same everywhere), and
// packets pinned to one of them at their source ToR. A pinned packet
// carries the path's index in e.routes and its position on it; every later
// switch takes the next link without asking its module.

// maxPaths bounds the paths enumerated between two switches.
const maxPaths = 4096

// pathSet is the shortest paths between two switches.
type pathSet struct {
	route int32         // index in e.routes of the first path; the others follow
	eg    [][]lb.Egress // per path, its links
}

// paths is the path set from switch a to switch b.
func (e *PacketEngine) paths(a, b int32) *pathSet {
	row := e.pathSets[a]
	if row == nil {
		row = make([]*pathSet, len(e.sws))
		e.pathSets[a] = row
	}
	if ps := row[b]; ps != nil {
		return ps
	}
	ps := &pathSet{route: int32(len(e.routes))}
	dst := e.sws[b].name
	var walk func(n string, acc []lb.Egress)
	walk = func(n string, acc []lb.Egress) {
		if len(ps.eg) >= maxPaths {
			return
		}
		if n == dst {
			p := append([]lb.Egress(nil), acc...)
			r := make([]int32, len(p))
			for i, h := range p {
				r[i] = h.Link
			}
			ps.eg = append(ps.eg, p)
			e.routes = append(e.routes, r)
			return
		}
		for _, h := range e.egresses(n, dst) {
			walk(h.Next, append(acc, h))
		}
	}
	if a != b {
		walk(e.sws[a].name, nil)
	}
	row[b] = ps
	return ps
}

// pin makes packet p follow path id from switch sw to switch to.
func (e *PacketEngine) pin(p *packet, sw, to int32, id int) bool {
	ps := e.paths(sw, to)
	if id < 0 || id >= len(ps.eg) {
		return false
	}
	p.route, p.hop = ps.route+int32(id)+1, 0
	p.hdr.Path = int32(id)
	p.hdr.Flags |= lb.FlagPinned
	return true
}

// pinnedNext is the next link of a pinned packet at switch sw, if it has
// one left; a pinned path that does not pass through sw fails the run.
func (e *PacketEngine) pinnedNext(sw int32, p *packet) (int32, bool) {
	if p.route == 0 {
		return 0, false
	}
	r := e.routes[p.route-1]
	if int(p.hop) >= len(r) {
		return 0, false
	}
	li := r[p.hop]
	p.hop++
	if l := &e.links[li]; !l.atSwitch || l.sw != sw {
		e.failf("fabric: a pinned path leads %s onto a link of %s", e.sws[sw].name, l.from)
		return 0, false
	}
	return li, true
}

// ctlKey is the hash a control packet between two switches is forwarded by.
func ctlKey(from, to int32) uint64 { return mix(uint64(from)<<32 | uint64(uint32(to)) | 1<<63) }

// ctlHops is the index in e.hops of the links from switch sw one hop
// closer to switch to: the slot of to in sw's row of the engine's next
// hops, which the hosts on a single link to it share.
func (e *PacketEngine) ctlHops(sw, to int32) int32 {
	return e.cachedHops(sw, int32(len(e.hostID))+to)
}
