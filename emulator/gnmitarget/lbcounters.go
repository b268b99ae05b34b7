package gnmitarget

import (
	"slices"
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
		at     []*pb.PathElem // the path above counter[name=N]
		counts []lb.Count
	}
	root := elem(collectors.LBRoot)
	gs := []group{{[]*pb.PathElem{root, elem(collectors.LBSwitchElem)}, sc.Switch}, {[]*pb.PathElem{root, elem(collectors.LBHostsElem)}, sc.Hosts}}
	for _, p := range sc.Ports {
		gs = append(gs, group{[]*pb.PathElem{root, elem(collectors.LBPortsElem), elem(collectors.LBPortElem, collectors.LBKeyName, p.Port)}, p.Counts})
	}
	var ns []*pb.Notification
	for _, g := range gs {
		for _, c := range g.counts {
			ns = append(ns, &pb.Notification{Timestamp: ts.UnixNano(), Atomic: true,
				Prefix: &pb.Path{Target: t.name, Elem: append(slices.Clip(g.at),
					elem(collectors.LBCounterElem, collectors.LBKeyName, c.Name), elem(collectors.LBStateElem))},
				Update: []*pb.Update{u(collectors.LBValueLeaf, c.Value)}})
		}
	}
	var rj rejects
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	for _, n := range ns {
		if idle {
			n.Update = append(n.Update, t.leaves.idle)
		}
		t.update(n, &rj)
	}
	t.sayRejects(rj, "scheme counters")
}
