package gnmitarget

import (
	"strings"
	"time"

	"github.com/openconfig/gnmi/ctree"
	"github.com/openconfig/gnmi/match"
	"github.com/openconfig/gnmi/path"
	pb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/subscribe"
)

// Why samples were lost: openconfig/gnmi's subscribe server gives each
// client a coalescing queue keyed by cache leaf. When a leaf is updated
// again before the client's stream has sent it, the queue keeps one entry
// and sends the newest value with Update.Duplicates set: the older sample
// is gone. A real switch samples on wall time, every interval; the twin
// simulates as fast as it can and publishes a whole snapshot per simulated
// interval, often many per millisecond of wall time, faster than gRPC and
// the collector can carry them, so most intermediate samples were
// coalesced away (e.g. 85 of 111 queue samples kept over an 11 ms point,
// with gaps of 1.2 ms at a 100 us interval).
//
// The target therefore holds the publisher back: before it publishes a
// snapshot, every STREAM subscriber must have sent what was published
// before (each leaf's newest timestamp is tracked per subscriber, through
// a match tree registered with the same queries as the subscribe server's,
// and cleared when its stream sends that timestamp or a later one). The
// simulation waits for telemetry instead of outrunning it. A subscriber
// that does not catch up within maxWait is marked lagging and no longer
// waited for until it has caught up, so one stuck client cannot stall the
// lab; what it loses then arrives with Duplicates set, and the collector
// records a gap for it.

// maxWait bounds how long Publish waits for one lagging subscriber.
const maxWait = time.Second

// flow is one STREAM subscription's delivery state.
type flow struct {
	t *Target
	// pending holds, per notification prefix, the newest timestamp
	// published and not yet sent; guarded by t.flowMu.
	pending map[string]int64
	lagging bool
}

func prefixKey(p *pb.Path) string { return strings.Join(path.ToStrings(p, true), "\x00") }

// prefixInfo is what the target knows of one of its own notification
// prefixes (notify.go): the flows' key for it and which flows a
// notification under it matches. Matching a notification against the
// subscriptions took a path of strings per update (two dozen for a port's
// PFC table) at every sample, as much again as the subscribe server's
// own matching; the flows a prefix matches change only when a
// subscription comes or goes (flowGen), so they are matched once, with
// and without the idle mark (its update is a leaf path of its own).
type prefixInfo struct {
	key     string
	strs    []string // path.ToStrings(prefix, true)
	gen     [2]uint64
	matched [2][]*flow // by idle; valid when gen equals the target's flowGen
}

// addPrefixes registers prefixes the target built (guarded by flowMu).
func (t *Target) addPrefixes(ps ...*pb.Path) {
	t.flowMu.Lock()
	defer t.flowMu.Unlock()
	for _, p := range ps {
		strs := path.ToStrings(p, true)
		t.prefixes[p] = &prefixInfo{key: strings.Join(strs, "\x00"), strs: strs}
	}
}

// keyLocked is p's key in the flows' pending maps (flowMu held).
func (t *Target) keyLocked(p *pb.Path) string {
	if i := t.prefixes[p]; i != nil {
		return i.key
	}
	return prefixKey(p) // a clone (duplicates marked) or a prefix not built here
}

// Update implements match.Client: the cache published a leaf this
// subscription matches.
func (f *flow) Update(v interface{}) {
	l, ok := v.(*ctree.Leaf)
	if !ok {
		return
	}
	n, ok := l.Value().(*pb.Notification)
	if !ok {
		return
	}
	f.t.flowMu.Lock()
	f.noteLocked(f.t.keyLocked(n.GetPrefix()), n.GetTimestamp())
	f.t.flowMu.Unlock()
}

func (f *flow) noteLocked(k string, ts int64) {
	if ts > f.pending[k] {
		f.pending[k] = ts
	}
}

// sent records a response the stream delivered.
func (f *flow) sent(r *pb.SubscribeResponse) {
	n := r.GetUpdate()
	if n == nil {
		return
	}
	f.t.flowMu.Lock()
	k := f.t.keyLocked(n.GetPrefix())
	if ts, ok := f.pending[k]; ok && n.GetTimestamp() >= ts {
		delete(f.pending, k)
		if len(f.pending) == 0 {
			f.lagging = false
			f.t.signalDrained()
		}
	}
	f.t.flowMu.Unlock()
}

// track tells the subscriptions' flows about a leaf the cache updated
// (the cache's client calls it before the subscribe server queues it).
func (t *Target) track(l *ctree.Leaf) {
	n, ok := l.Value().(*pb.Notification)
	if !ok {
		return
	}
	t.flowMu.Lock()
	info, gen := t.prefixes[n.GetPrefix()], t.flowGen
	t.flowMu.Unlock()
	if info == nil {
		subscribe.UpdateNotification(t.match, l, n, path.ToStrings(n.GetPrefix(), true))
		return
	}
	idle := 0
	if u := n.GetUpdate(); len(u) > 0 && u[len(u)-1] == t.leaves.idle {
		idle = 1
	}
	t.flowMu.Lock()
	if info.gen[idle] == gen && info.matched[idle] != nil {
		for _, f := range info.matched[idle] {
			f.noteLocked(info.key, n.GetTimestamp())
		}
		t.flowMu.Unlock()
		return
	}
	t.flowMu.Unlock()
	// Match as the subscribe server does (each update's path under the
	// prefix), noting the flows; remember them for this prefix.
	updated := map[match.Client]struct{}{}
	for _, u := range n.GetUpdate() {
		t.match.UpdateOnce(l, append(info.strs[:len(info.strs):len(info.strs)], path.ToStrings(u.GetPath(), false)...), updated)
	}
	matched := make([]*flow, 0, len(updated))
	for c := range updated {
		if f, ok := c.(*flow); ok {
			matched = append(matched, f)
		}
	}
	t.flowMu.Lock()
	info.gen[idle], info.matched[idle] = gen, matched
	t.flowMu.Unlock()
}

// addFlow registers a STREAM subscription's queries, built as the
// subscribe server builds its own; the returned function removes them.
func (t *Target) addFlow(req *pb.SubscriptionList) (*flow, func()) {
	f := &flow{t: t, pending: map[string]int64{}}
	prefix := path.ToStrings(req.GetPrefix(), true)
	var removes []func()
	for _, s := range req.GetSubscription() {
		p := s.GetPath()
		if p == nil {
			continue
		}
		query := append([]string(nil), prefix...)
		if origin := p.GetOrigin(); req.GetPrefix().GetOrigin() == "" && origin != "" {
			query = append(query, origin)
		}
		removes = append(removes, t.match.AddQuery(append(query, path.ToStrings(p, false)...), f))
	}
	t.flowMu.Lock()
	t.flows[f] = true
	t.flowGen++
	t.flowMu.Unlock()
	return f, func() {
		for _, r := range removes {
			r()
		}
		t.flowMu.Lock()
		delete(t.flows, f)
		t.flowGen++
		t.signalDrained()
		t.flowMu.Unlock()
	}
}

func (t *Target) signalDrained() {
	select {
	case t.drained <- struct{}{}:
	default:
	}
}

// waitDrained returns when every subscriber that is not lagging has sent
// all it was given, or after maxWait, marking the late ones lagging.
func (t *Target) waitDrained() {
	deadline := time.Now().Add(t.maxWait)
	for {
		t.flowMu.Lock()
		var behind []*flow
		for f := range t.flows {
			if !f.lagging && len(f.pending) > 0 {
				behind = append(behind, f)
			}
		}
		left := time.Until(deadline)
		if len(behind) > 0 && left <= 0 {
			for _, f := range behind {
				f.lagging = true
			}
		}
		t.flowMu.Unlock()
		if len(behind) == 0 {
			return
		}
		if left <= 0 {
			t.log.Warn("gnmi subscriber lags behind the twin; its samples may be coalesced", "device", t.name, "subscribers", len(behind))
			return
		}
		timer := time.NewTimer(left)
		select {
		case <-t.drained:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// flowStream tells a flow what its stream sent.
type flowStream struct {
	pb.GNMI_SubscribeServer
	flow *flow
}

func (s flowStream) Send(r *pb.SubscribeResponse) error {
	if err := s.GNMI_SubscribeServer.Send(r); err != nil {
		return err
	}
	s.flow.sent(r)
	var dups uint64
	for _, u := range r.GetUpdate().GetUpdate() {
		dups += uint64(u.GetDuplicates())
	}
	if dups > 0 {
		s.flow.t.coalesced.Add(dups)
	}
	return nil
}

// Coalesced is how many samples the target has coalesced away for its
// STREAM subscribers, in all: each such loss also reaches the subscriber
// as Update.Duplicates (the collector records a collector_gap for it).
func (t *Target) Coalesced() uint64 { return t.coalesced.Load() }
