package inventory

import (
	"fmt"
	"math"
	"sync"
)

// Packet geometry and link delay that the fabric twin simulates and that
// reports assume when they compute a flow's ideal FCT from an archive.
const (
	// DefaultMTU is the RoCE payload per packet (the 4096 B IB MTU).
	DefaultMTU = 4096
	// DefaultHeaderBytes is the wire overhead per packet: Ethernet 14 +
	// IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62, plus preamble and
	// inter-frame gap 20 = 82.
	DefaultHeaderBytes = 82
	// DefaultLinkDelayNs is the one-way propagation delay of a link that
	// declares none.
	DefaultLinkDelayNs = 1000
	// DefaultAckBytes is an ACK (or NACK, CNP) on the wire, as the fabric
	// twin sends it: a minimum Ethernet frame.
	DefaultAckBytes = 64
)

// PathLink is one link of a path as the ideal FCT sees it.
type PathLink struct {
	Gbps    float64 // bits per ns
	DelayNs int64
}

// IdealFCT is the completion time in ns of a flow of the given payload
// bytes alone on an idle path, as its sender sees it (from the first byte
// sent to the ACK of the last received): every packet (payload plus header
// bytes) serialised once at the path's slowest link, plus the base round
// trip of RoundTrip. FCT slowdown is measured against it.
//
// This is the papers' convention (the ns-3 RDMA code bases print a
// "standalone FCT" of base RTT + the flow's bytes at the bottleneck rate);
// their base RTT charges one full MTU payload per link and no ACK, where
// this one charges what an idle network does: the first packet's
// store-and-forward at every switch and the ACK's serialisation on every
// link back (docs/reports.md).
func IdealFCT(bytes int64, mtu, header int, path []PathLink) int64 {
	if len(path) == 0 || mtu <= 0 {
		return 0
	}
	m, hdr := int64(mtu), int64(header)
	pkts := max((bytes+m-1)/m, 1)
	slowest := math.Inf(1)
	for _, l := range path {
		slowest = math.Min(slowest, l.Gbps)
	}
	return int64(float64(bytes+pkts*hdr)*8/slowest + RoundTrip(min(bytes, m)+hdr, path))
}

// RoundTrip is what a flow's completion adds, on an idle path, to the
// serialisation of all its bytes at the slowest link, in ns: its first
// packet (firstWire bytes on the wire) stored and forwarded at every
// switch (every link after the first; the rest follow back to back), the
// propagation there and back, and the ACK serialised on every link back.
func RoundTrip(firstWire int64, path []PathLink) float64 {
	var d float64
	for i, l := range path {
		d += 2*float64(l.DelayNs) + DefaultAckBytes*8/l.Gbps
		if i > 0 {
			d += float64(firstWire) * 8 / l.Gbps
		}
	}
	return d
}

// ShortestPath gives the links of one path with the fewest hops from host
// src to host dst (see Paths.Shortest).
func (l *Lab) ShortestPath(src, dst string) ([]PathLink, error) {
	p, err := NewPaths(l)
	if err != nil {
		return nil, err
	}
	return p.Shortest(src, dst)
}

// Paths answers shortest-path questions about one lab; it builds the
// lab's graph once, for callers that ask about many host pairs, and keeps
// every destination's hop counts once computed (a report asks about most
// pairs of a fabric of a thousand hosts: one breadth-first search per
// destination, not per pair). Safe for concurrent use.
type Paths struct {
	lab   *Lab
	index map[string]int32 // device -> node
	adj   [][]pathHop      // by node, in the lab's link order
	host  []bool           // by node

	mu   sync.Mutex
	dist map[int32][]int32 // destination node -> hop count of every node to it (-1: none)
}

type pathHop struct {
	to   int32
	link PathLink
}

// distCacheMax bounds the destinations whose hop counts Paths keeps.
const distCacheMax = 4096

// NewPaths builds the graph of a lab; every link needs a known speed.
func NewPaths(l *Lab) (*Paths, error) {
	p := &Paths{lab: l, index: map[string]int32{}, dist: map[int32][]int32{}}
	node := func(name string) int32 {
		i, ok := p.index[name]
		if !ok {
			i = int32(len(p.adj))
			p.index[name] = i
			p.adj = append(p.adj, nil)
			p.host = append(p.host, false)
		}
		return i
	}
	for _, h := range l.Hosts {
		p.host[node(h.Name)] = true
	}
	for i, k := range l.Links {
		gbps := l.LinkSpeedGbps(k)
		if gbps <= 0 {
			return nil, fmt.Errorf("lab %s: link %d (%s - %s): unknown speed", l.Name, i, k.A, k.B)
		}
		pl := PathLink{Gbps: gbps, DelayNs: k.DelayNs}
		if pl.DelayNs == 0 {
			pl.DelayNs = DefaultLinkDelayNs
		}
		a, b := node(k.A.Device), node(k.B.Device)
		p.adj[a] = append(p.adj[a], pathHop{b, pl})
		p.adj[b] = append(p.adj[b], pathHop{a, pl})
	}
	return p, nil
}

// Shortest gives the links of one path with the fewest hops from host src
// to host dst, never forwarding through another host. Where several
// shortest paths exist it takes, at each device, the first link in the
// lab's link order; on a symmetric fabric they all have the same ideal FCT.
func (p *Paths) Shortest(src, dst string) ([]PathLink, error) {
	l := p.lab
	var ends [2]int32
	for i, h := range []string{src, dst} {
		n, ok := p.index[h]
		if !ok || !p.host[n] {
			return nil, fmt.Errorf("lab %s: %s is not a host", l.Name, h)
		}
		ends[i] = n
	}
	s, d := ends[0], ends[1]
	if s == d {
		return nil, fmt.Errorf("lab %s: %s to itself has no path", l.Name, src)
	}
	dist := p.distTo(d)
	if dist[s] < 0 {
		return nil, fmt.Errorf("lab %s: no path from %s to %s", l.Name, src, dst)
	}
	forwards := func(n int32) bool { return !p.host[n] || n == d }
	var path []PathLink
	for n := s; n != d; {
		for _, h := range p.adj[n] {
			if dist[h.to] >= 0 && dist[h.to] == dist[n]-1 && forwards(h.to) {
				path = append(path, h.link)
				n = h.to
				break
			}
		}
	}
	return path, nil
}

// distTo is every node's hop count to d (-1: no path), breadth-first from
// d through devices that forward (hosts do not, but d), computed once.
func (p *Paths) distTo(d int32) []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dist, ok := p.dist[d]; ok {
		return dist
	}
	dist := make([]int32, len(p.adj))
	for i := range dist {
		dist[i] = -1
	}
	dist[d] = 0
	queue := []int32{d}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if p.host[n] && n != d {
			continue // hosts do not forward
		}
		for _, h := range p.adj[n] {
			if dist[h.to] < 0 {
				dist[h.to] = dist[n] + 1
				queue = append(queue, h.to)
			}
		}
	}
	if len(p.dist) >= distCacheMax {
		clear(p.dist)
	}
	p.dist[d] = dist
	return dist
}
