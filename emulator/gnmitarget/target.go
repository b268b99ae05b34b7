package gnmitarget

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openconfig/gnmi/cache"
	"github.com/openconfig/gnmi/ctree"
	"github.com/openconfig/gnmi/match"
	pb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/subscribe"
	"google.golang.org/grpc"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
)

// CountersDB is the SONiC-style target for PFC and queue occupancy.
const CountersDB = collectors.CountersDB

// Target is one switch's gNMI server.
type Target struct {
	pb.UnimplementedGNMIServer
	qos   qosStore // Get/Set of the switch's QoS configuration (qos.go)
	name  string
	cache *cache.Cache
	sub   *subscribe.Server
	grpc  *grpc.Server
	log   *slog.Logger

	mu        sync.Mutex
	intervals map[int]time.Duration // active SAMPLE subscriptions
	nextID    int
	addr      string
	serveCtx  context.Context
	restart   *restartReq // set while Restart waits for Serve
	closed    bool
	wrap      func(net.Listener) net.Listener // WrapListener
	security  Security                        // Secure (security.go)

	// Flow control (flow.go): STREAM subscriptions and what each has yet
	// to send.
	match   *match.Match
	flowMu  sync.Mutex
	flows   map[*flow]bool
	drained chan struct{}
	maxWait time.Duration
	// prefixes: the notification prefixes publish built (notify.go) and
	// the flows each matches, as of flowGen (bumped when a subscription
	// comes or goes); both guarded by flowMu.
	prefixes map[*pb.Path]*prefixInfo
	flowGen  uint64

	pubMu sync.Mutex               // one publish at a time
	ports map[string]*portPrefixes // guarded by pubMu
	// lbPrefixes are the scheme counters' prefixes (lbcounters.go),
	// guarded by pubMu.
	lbPrefixes map[lbKey]*pb.Path
	leaves     *leaves
	// coalesced counts samples lost to coalescing or refused by the cache
	// (Coalesced).
	coalesced atomic.Uint64
	// garbleUntil: until this wall time (unix ns), one PFC counter of
	// every port reads "N/A" (GarbleFor); garbling says so for the
	// publish under way (guarded by pubMu).
	garbleUntil atomic.Int64
	garbling    bool
}

// garbledPrio is the priority whose PFC rx count GarbleFor garbles: the
// lossless one, whose counters a run's report reads.
const garbledPrio = 3

// GarbleFor makes the switch's COUNTERS_DB samples, for d from now, read
// "N/A" for every port's priority-3 PFC rx count, as a platform that
// lacks a counter writes: a fault for drilling how collectors and
// dashboards take values that are no counters (lab fault garble-gnmi).
func (t *Target) GarbleFor(d time.Duration) {
	t.garbleUntil.Store(time.Now().Add(d).UnixNano())
}

// New makes the target of switch name.
func New(name string, log *slog.Logger) (*Target, error) {
	if log == nil {
		log = slog.Default()
	}
	// Without event-driven emulation the cache forwards every sample, even
	// an unchanged one: that is what SAMPLE subscribers expect.
	c := cache.New([]string{name, CountersDB}, cache.DisableEventDrivenEmulation())
	s, err := subscribe.NewServer(c)
	if err != nil {
		return nil, fmt.Errorf("gnmi %s: %w", name, err)
	}
	t := &Target{name: name, cache: c, sub: s, log: log, intervals: map[int]time.Duration{},
		match: match.New(), flows: map[*flow]bool{}, drained: make(chan struct{}, 1), maxWait: maxWait,
		prefixes: map[*pb.Path]*prefixInfo{}, ports: map[string]*portPrefixes{}, lbPrefixes: map[lbKey]*pb.Path{}, leaves: newLeaves()}
	c.SetClient(func(l *ctree.Leaf) {
		t.track(l) // before the subscribe server queues it: its send clears it
		s.Update(l)
	})
	for _, tg := range []string{name, CountersDB} {
		c.GetTarget(tg).Sync()
	}
	return t, nil
}

// Serve serves gNMI on lis until ctx is done or Close; a Restart in
// between serves again on the same address, and Serve returns only then.
func (t *Target) Serve(ctx context.Context, lis net.Listener) error {
	t.mu.Lock()
	t.addr = lis.Addr().String()
	t.serveCtx = ctx
	t.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { t.Close() })
	defer stop()
	for {
		t.mu.Lock()
		g := grpc.NewServer(t.serverOptions()...)
		pb.RegisterGNMIServer(g, t)
		t.grpc = g
		t.mu.Unlock()
		err := g.Serve(lis)
		t.mu.Lock()
		restart, closed := t.restart, t.closed
		t.restart = nil
		t.mu.Unlock()
		if restart == nil || closed || ctx.Err() != nil {
			if restart != nil {
				restart.err = fmt.Errorf("gnmi %s: closed during the restart", t.name)
				close(restart.done)
			}
			return err
		}
		// Restart: down for a while, then the same address again.
		select {
		case <-time.After(restart.down):
		case <-ctx.Done():
		}
		lis, err = listenAgain(ctx, t.Addr())
		t.mu.Lock()
		if err == nil && t.wrap != nil {
			lis = t.wrap(lis)
		}
		if err == nil && t.closed {
			lis.Close()
			err = fmt.Errorf("gnmi %s: closed during the restart", t.name)
		}
		t.mu.Unlock()
		restart.err = err
		close(restart.done)
		if err != nil {
			return err
		}
	}
}

// WrapListener makes Serve wrap the listener it opens again after a
// Restart with wrap, as the caller wrapped the first one (the emulated
// lab gates its endpoints so that faults can drop or delay them).
func (t *Target) WrapListener(wrap func(net.Listener) net.Listener) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wrap = wrap
}

// restartReq is a Restart Serve carries out.
type restartReq struct {
	down time.Duration
	done chan struct{}
	err  error
}

// listenAgain listens on addr, retrying while the old socket lets go.
func listenAgain(ctx context.Context, addr string) (net.Listener, error) {
	var err error
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
		var lis net.Listener
		if lis, err = net.Listen("tcp", addr); err == nil {
			return lis, nil
		}
	}
	return nil, fmt.Errorf("gnmi: listen again on %s: %w", addr, err)
}

// Restart plays a restart of the switch's gNMI server: it stops serving
// (every stream ends, the listener closes), stays down for down, and
// serves again on the same address. It returns once the target serves
// again. Published samples stay in the cache, as a real target's state
// outlives its server process only when the platform keeps it; those
// published while down reach no subscriber.
func (t *Target) Restart(ctx context.Context, down time.Duration) error {
	t.mu.Lock()
	g := t.grpc
	if g == nil || t.closed || t.serveCtx == nil || t.serveCtx.Err() != nil {
		t.mu.Unlock()
		return fmt.Errorf("gnmi %s: not serving", t.name)
	}
	if t.restart != nil {
		t.mu.Unlock()
		return fmt.Errorf("gnmi %s: a restart is under way", t.name)
	}
	req := &restartReq{down: down, done: make(chan struct{})}
	t.restart = req
	t.mu.Unlock()
	g.Stop()
	select {
	case <-req.done:
		return req.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Name is the switch's name.
func (t *Target) Name() string { return t.name }

// Addr is where it listens.
func (t *Target) Addr() string { t.mu.Lock(); defer t.mu.Unlock(); return t.addr }

// Close stops the server.
func (t *Target) Close() error {
	t.mu.Lock()
	g := t.grpc
	t.closed = true
	t.mu.Unlock()
	if g != nil {
		g.Stop()
	}
	return nil
}

// Capabilities answers what the target serves.
func (t *Target) Capabilities(context.Context, *pb.CapabilityRequest) (*pb.CapabilityResponse, error) {
	return &pb.CapabilityResponse{
		SupportedModels: []*pb.ModelData{
			{Name: "openconfig-interfaces", Organization: "OpenConfig working group"},
			{Name: "openconfig-qos", Organization: "OpenConfig working group"},
		},
		SupportedEncodings: []pb.Encoding{pb.Encoding_JSON_IETF, pb.Encoding_PROTO},
		GNMIVersion:        "0.8.0",
	}, nil
}

// Subscribe records the requested sample interval and, for a STREAM
// subscription, what it has yet to send (flow.go), then hands the stream
// to the subscribe package.
func (t *Target) Subscribe(stream pb.GNMI_SubscribeServer) error {
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	var d time.Duration
	for _, s := range req.GetSubscribe().GetSubscription() {
		if s.GetMode() == pb.SubscriptionMode_SAMPLE && s.GetSampleInterval() > 0 {
			if i := time.Duration(s.GetSampleInterval()); d == 0 || i < d {
				d = i
			}
		}
	}
	if d > 0 {
		t.mu.Lock()
		t.nextID++
		id := t.nextID
		t.intervals[id] = d
		t.mu.Unlock()
		defer func() { t.mu.Lock(); delete(t.intervals, id); t.mu.Unlock() }()
	}
	if sl := req.GetSubscribe(); sl.GetMode() == pb.SubscriptionList_STREAM {
		f, remove := t.addFlow(sl)
		defer remove()
		stream = flowStream{GNMI_SubscribeServer: stream, flow: f}
	}
	return t.sub.Subscribe(&replayStream{GNMI_SubscribeServer: stream, first: req})
}

// replayStream gives the subscribe package the request already read.
type replayStream struct {
	pb.GNMI_SubscribeServer
	first *pb.SubscribeRequest
}

func (r *replayStream) Recv() (*pb.SubscribeRequest, error) {
	if f := r.first; f != nil {
		r.first = nil
		return f, nil
	}
	return r.GNMI_SubscribeServer.Recv()
}

// SampleInterval is the finest interval of the active SAMPLE subscriptions.
func (t *Target) SampleInterval() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var d time.Duration
	for _, i := range t.intervals {
		if d == 0 || i < d {
			d = i
		}
	}
	return d
}

// Publish writes one snapshot of the switch's ports taken while traffic is
// simulated, stamped ts, once the STREAM subscribers have sent the
// previous ones (flow.go), so no sample is coalesced away while they keep
// up.
func (t *Target) Publish(ts time.Time, ports map[string]*fabric.PortCounters) {
	t.publish(ts, ports, false)
}

// PublishIdle is Publish of a snapshot taken while no traffic runs: every
// notification carries the collectors.IdleLeaf mark, and collectors tag
// its points idle.
func (t *Target) PublishIdle(ts time.Time, ports map[string]*fabric.PortCounters) {
	t.publish(ts, ports, true)
}

func (t *Target) publish(ts time.Time, ports map[string]*fabric.PortCounters, idle bool) {
	t.waitDrained()
	names := make([]string, 0, len(ports))
	for p := range ports {
		names = append(names, p)
	}
	sort.Strings(names)
	var rj rejects
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	t.garbling = time.Now().UnixNano() < t.garbleUntil.Load()
	for _, p := range names {
		for _, n := range t.notifications(ts.UnixNano(), p, ports[p], idle) {
			t.update(n, &rj)
		}
	}
	t.sayRejects(rj, "port counters")
}

// rejects counts the cache updates a publish lost.
type rejects struct {
	n    uint64
	last error
}

// update writes n into the cache; a rejected update (stale: the twin's
// clock went back) is a lost sample, counted in rj.
func (t *Target) update(n *pb.Notification, rj *rejects) {
	if err := t.cache.GnmiUpdate(n); err != nil {
		rj.n, rj.last = rj.n+1, err
	}
}

// sayRejects counts a publish's lost samples with the coalesced ones
// (Coalesced) and says so once.
func (t *Target) sayRejects(rj rejects, what string) {
	if rj.n > 0 {
		t.coalesced.Add(rj.n)
		t.log.Warn("gnmi cache updates rejected; samples lost", "device", t.name, "of", what, "samples", rj.n, "err", rj.last)
	}
}

func u(name string, v uint64) *pb.Update {
	return &pb.Update{Path: &pb.Path{Elem: []*pb.PathElem{{Name: name}}}, Val: &pb.TypedValue{Value: &pb.TypedValue_UintVal{UintVal: v}}}
}
