package fabric

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"

	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/inventory"
)

// Topology is the twin's graph: devices joined by full-duplex links, each
// modelled as two directed links.
type Topology struct {
	links   []dlink
	out     map[string][]int // device -> outgoing directed links, sorted
	isHost  map[string]bool
	hostDev map[string]string         // host -> RNIC device (its port name)
	dist    map[string]map[string]int // filled on demand, under distMu
	distMu  sync.Mutex                // engines running at once may share a topology
}

// dlink is one direction of a cable.
type dlink struct {
	from, fromPort string
	to, toPort     string
	rate           float64 // bits per ns
	delay          int64   // ns
}

// Hop is one link a flow crosses.
type Hop struct {
	Device, EgressPort string // where the packet leaves
	Next, IngressPort  string // where it arrives
}

const defaultDelayNs = inventory.DefaultLinkDelayNs

// NewTopology builds the twin's graph from a lab.
func NewTopology(lab *inventory.Lab) (*Topology, error) {
	t := &Topology{out: map[string][]int{}, isHost: map[string]bool{}, hostDev: map[string]string{}, dist: map[string]map[string]int{}}
	for _, h := range lab.Hosts {
		t.isHost[h.Name] = true
		if len(h.RNICs) > 0 {
			t.hostDev[h.Name] = h.RNICs[0].Device
		}
	}
	norm := func(e inventory.LinkEnd) string {
		if h, ok := lab.Host(e.Device); ok {
			for _, r := range h.RNICs {
				if r.Netdev == e.Port {
					return r.Device
				}
			}
		}
		return e.Port
	}
	for i, l := range lab.Links {
		gbps := lab.LinkSpeedGbps(l)
		if gbps <= 0 {
			return nil, fmt.Errorf("link %d (%s - %s): unknown speed; declare speed_gbps on both ends", i, l.A, l.B)
		}
		d := l.DelayNs
		if d == 0 {
			d = defaultDelayNs
		}
		a, b := norm(l.A), norm(l.B)
		t.addLink(dlink{l.A.Device, a, l.B.Device, b, gbps, d})
		t.addLink(dlink{l.B.Device, b, l.A.Device, a, gbps, d})
	}
	for _, v := range t.out {
		sort.Ints(v)
	}
	return t, nil
}

func (t *Topology) addLink(l dlink) {
	t.links = append(t.links, l)
	t.out[l.from] = append(t.out[l.from], len(t.links)-1)
}

// homeSwitch is the switch at the far end of a host's only link (every
// cable is two directed links, so also its only way in): every path to
// or from a single-homed host crosses it. false for a host with several
// links, or linked to another host.
func (t *Topology) homeSwitch(host string) (string, bool) {
	out := t.out[host]
	if len(out) != 1 || t.isHost[t.links[out[0]].to] {
		return "", false
	}
	return t.links[out[0]].to, true
}

// distances: hop counts to dst, never forwarding through another host.
func (t *Topology) distances(dst string) map[string]int {
	t.distMu.Lock()
	defer t.distMu.Unlock()
	if d, ok := t.dist[dst]; ok {
		return d
	}
	in := map[string][]int{}
	for i, l := range t.links {
		in[l.to] = append(in[l.to], i)
	}
	d := map[string]int{dst: 0}
	queue := []string{dst}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != dst && t.isHost[n] {
			continue // hosts do not forward
		}
		for _, li := range in[n] {
			from := t.links[li].from
			if _, seen := d[from]; !seen {
				d[from] = d[n] + 1
				queue = append(queue, from)
			}
		}
	}
	t.dist[dst] = d
	return d
}

// path returns the directed links a flow takes: at every device ECMP picks
// among the equal-cost next hops by a hash of the flow's 5-tuple, the
// device and the seed, as switches hash with a per-switch seed.
func (t *Topology) path(f Flow, seed int64) ([]int, error) {
	return t.pathVia(f, t.nextHops, func(n string) uint64 { return switchSalt(n, seed) })
}

// pathVia is path with the next hops and the switches' salts from hops and
// salt, which a caller routing many flows may memoise.
func (t *Topology) pathVia(f Flow, hops func(n, dst string) []int, salt func(n string) uint64) ([]int, error) {
	if f.Src == f.Dst {
		return nil, fmt.Errorf("flow %d: source and destination are both %s", f.ID, f.Src)
	}
	if !t.isHost[f.Src] || !t.isHost[f.Dst] {
		return nil, fmt.Errorf("flow %d: %s -> %s: both ends must be hosts of the lab", f.ID, f.Src, f.Dst)
	}
	var p []int
	key := flowKey(f.Src, f.Dst, f.ID)
	for n := f.Src; n != f.Dst; {
		cands := hops(n, f.Dst)
		if len(cands) == 0 { // only at the source: the others are closer
			return nil, fmt.Errorf("flow %d: no path from %s to %s", f.ID, f.Src, f.Dst)
		}
		li := cands[ecmpPick(key, salt(n), len(cands))]
		p = append(p, li)
		n = t.links[li].to
	}
	return p, nil
}

// flowKey hashes a direction of a flow's RoCEv2 5-tuple: UDP source port
// from the flow (its QP), destination port 4791, protocol 17.
func flowKey(src, dst string, id int) uint64 {
	// FNV-1a of "src|dst|port|4791|17", without fmt: the flow engine keys
	// every flow of a run.
	var buf [64]byte
	k := append(buf[:0], src...)
	k = append(k, '|')
	k = append(k, dst...)
	k = append(k, '|')
	k = strconv.AppendInt(k, int64(49152+id%16384), 10)
	k = append(k, "|4791|17"...)
	h := uint64(14695981039346656037)
	for _, c := range k {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return mix(h)
}

// switchSalt is a switch's hash seed: switches hash with different salts
// so that their ECMP choices are independent.
func switchSalt(device string, seed int64) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d", device, seed)
	return mix(h.Sum64())
}

// nextHops lists, in link order, the links from n one hop closer to dst.
func (t *Topology) nextHops(n, dst string) []int {
	d := t.distances(dst)
	var cands []int
	for _, li := range t.out[n] {
		if dn, ok := d[t.links[li].to]; ok && dn == d[n]-1 {
			cands = append(cands, li)
		}
	}
	return cands
}

// ecmpPick is ECMP's choice among n equal-cost links.
func ecmpPick(key, salt uint64, n int) int { return lb.ECMP(key, salt, n) }

// mix is a 64-bit finaliser so nearby inputs spread evenly: the modules'
// (lb.Mix), so that they hash as the engine does.
func mix(x uint64) uint64 { return lb.Mix(x) }

// Path lists the hops a flow takes (for inspection and tests).
func (t *Topology) Path(f Flow, seed int64) ([]Hop, error) {
	p, err := t.path(f, seed)
	if err != nil {
		return nil, err
	}
	hops := make([]Hop, len(p))
	for i, li := range p {
		l := t.links[li]
		hops[i] = Hop{Device: l.from, EgressPort: l.fromPort, Next: l.to, IngressPort: l.toPort}
	}
	return hops, nil
}

// IdealFCT is a flow's completion time alone on an idle network along the
// path its ECMP hash picks, to the ACK of its last packet
// (inventory.IdealFCT, the formula reports use).
func (t *Topology) IdealFCT(f Flow, cfg Config) (int64, error) {
	p, err := t.path(f, cfg.Seed)
	if err != nil {
		return 0, err
	}
	return inventory.IdealFCT(f.Bytes, cfg.MTU, cfg.HeaderBytes, t.pathLinks(p)), nil
}

// pathLinks is a path's links as the ideal FCT sees them.
func (t *Topology) pathLinks(p []int) []inventory.PathLink {
	links := make([]inventory.PathLink, len(p))
	for i, li := range p {
		links[i] = inventory.PathLink{Gbps: t.links[li].rate, DelayNs: t.links[li].delay}
	}
	return links
}
