package gnmitarget

import (
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
)

// PublishSchemes writes the switch's scheme counters (its load-balancing
// module's and its hosts' modules', fabric.SchemeCounts) sampled at ts,
// under the twin's own path collectors.LBRoot: one notification per
// counter, as per port for the interface counters; idle as PublishIdle's.
// The twin calls it after Publish of the same sample, so the subscribers
// have sent the previous one.
func (t *Target) PublishSchemes(ts time.Time, sc fabric.SchemeCounts, idle bool) {
	var lost uint64
	var lastErr error
	for _, g := range []struct {
		elem   string
		counts []lb.Count
	}{{collectors.LBSwitchElem, sc.Switch}, {collectors.LBHostsElem, sc.Hosts}} {
		for _, c := range g.counts {
			n := &pb.Notification{Timestamp: ts.UnixNano(), Atomic: true,
				Prefix: &pb.Path{Target: t.name, Elem: []*pb.PathElem{elem(collectors.LBRoot), elem(g.elem),
					elem(collectors.LBCounterElem, collectors.LBKeyName, c.Name), elem(collectors.LBStateElem)}},
				Update: []*pb.Update{u(collectors.LBValueLeaf, c.Value)}}
			if idle {
				n.Update = append(n.Update, idleMark())
			}
			if err := t.cache.GnmiUpdate(n); err != nil {
				lost, lastErr = lost+1, err
			}
		}
	}
	if lost > 0 {
		t.coalesced.Add(lost)
		t.log.Warn("gnmi cache updates of scheme counters rejected; samples lost", "device", t.name, "samples", lost, "err", lastErr)
	}
}
