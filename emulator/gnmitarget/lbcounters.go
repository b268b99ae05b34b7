package gnmitarget

import (
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// PublishSchemes writes the switch's scheme counters (its load-balancing
// module's, its hosts' modules' and its ports' per-link ones,
// fabric.SchemeCounts) sampled at ts, under the twin's own path
// collectors.LBRoot: one notification per counter, as per port for the
// interface counters; idle as PublishIdle's. The twin calls it after
// Publish of the same sample, so the subscribers have sent the previous
// one.
func (t *Target) PublishSchemes(ts time.Time, sc fabric.SchemeCounts, idle bool) {
	type group struct {
		scope, port string // collectors.LBSwitchElem, LBHostsElem or LBPortsElem; the port's name
		counts      []lb.Count
	}
	gs := []group{{collectors.LBSwitchElem, "", sc.Switch}, {collectors.LBHostsElem, "", sc.Hosts}}
	for _, p := range sc.Ports {
		gs = append(gs, group{collectors.LBPortsElem, p.Port, p.Counts})
	}
	var rj rejects
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	for _, g := range gs {
		for _, c := range g.counts {
			n := &pb.Notification{Timestamp: ts.UnixNano(), Atomic: true,
				Prefix: t.lbPrefix(lbKey{g.scope, g.port, c.Name}), Update: []*pb.Update{u(collectors.LBValueLeaf, c.Value)}}
			if idle {
				n.Update = append(n.Update, t.leaves.idle)
			}
			t.update(n, &rj)
		}
	}
	t.sayRejects(rj, "scheme counters")
}

// lbKey names one scheme counter's notification prefix.
type lbKey struct{ scope, port, name string }

// lbPrefix is a scheme counter's prefix, built once and registered as the
// ports' are (notify.go), so that its samples take the cached path
// (pubMu held).
func (t *Target) lbPrefix(k lbKey) *pb.Path {
	if p := t.lbPrefixes[k]; p != nil {
		return p
	}
	at := []*pb.PathElem{elem(collectors.LBRoot), elem(k.scope)}
	if k.scope == collectors.LBPortsElem {
		at = append(at, elem(collectors.LBPortElem, collectors.LBKeyName, k.port))
	}
	p := &pb.Path{Target: t.name, Elem: append(at, elem(collectors.LBCounterElem, collectors.LBKeyName, k.name), elem(collectors.LBStateElem))}
	t.lbPrefixes[k] = p
	t.addPrefixes(p)
	return p
}
