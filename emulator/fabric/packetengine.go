package fabric

import (
	"context"
	"fmt"
	"sort"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// PacketEngine is the packet-level engine: discrete events in integer
// picoseconds, packets from a pool, every queue, PAUSE frame, ACK and CNP
// simulated (see pswitch.go and prnic.go). Deterministic for a seed.
type PacketEngine struct {
	topo *Topology
	cfg  Config
	portSet
	links      []plink
	lc         []lctr              // per link and priority: packet counters (pcounters.go)
	portLinks  map[PortKey][]int32 // the links whose counters are a port's
	rev        []int32             // reverse direction of each link
	swc        []SwitchConfig      // each switch's settings
	swUsed     []int64
	swHeadroom []int64 // reserved per switch: HeadroomBytes per ingress port
	ev         eventQueue
	pool       pool
	now        int64 // ps
	rng        uint64
	qps        []*qp
	qpSlab     []qp // what qps point into: a QP's address without loading its pointer (warm)
	// dependencies of the current Run
	waitOn   map[int]int   // flow index -> unfinished dependencies
	children map[int][]int // flow ID -> dependant flow indexes
	byID     map[int]int
	results  []Result
	left     int
	// forwarding (pmodule.go, ppaths.go, pcontrol.go, preorder.go)
	mods      []swMod // per switch (possibly one module for all)
	arrives   []bool  // per switch: its module is an lb.Arriver
	sws       []*swView
	tier      []lb.Tier
	swID      map[string]int32
	hostID    map[string]int32
	hostDC    []DCQCN          // per host (hostID): its RNIC's DCQCN settings
	cands     [][]int32        // [switch][host, then switch] -> 1 + index in hops, 0 until needed
	hops      [][]lb.Egress    // the distinct lists of next hops
	hopLinks  [][]int          // the same lists as link indexes
	hopSpans  []hopSpan        // the same lists in hopFlat
	hopFlat   []int32          // every list's links, one after another
	hopIDs    map[string]int32 // a list's links (little-endian uint32s) -> 1 + index in hops
	hostName  []string         // per host index
	salts     []uint64         // per switch: its ECMP salt (its view's)
	qf        []qpFwd          // per QP: what forwarding reads
	attach    []int32          // per host: the switch of its only link, -1: several links
	pathSets  [][]*pathSet     // [switch][switch] -> shortest paths, on demand
	routes    [][]int32        // every enumerated path's links (pinned packets)
	qpToR     [][2]int32       // per QP: the ToRs of its source and destination
	pv        lb.Packet        // the module's view of the packet in hand
	pvPkt     *packet          // the packet pv shows
	pvDeq     lb.Packet        // the view of a packet leaving (Dequeuer)
	selecting bool             // a module's Select runs (it may pin)
	rqStats   ReorderStats
	rqs       []rqueue   // reorder queues (preorder.go)
	rqFree    []int32    // indexes of free ones
	resumes   []lb.Queue // resumed during Arrive: listed once the packet is queued
	arriving  bool       // a module's Arrive runs
	fns       []func()
	freeFns   []int32
	host      hostState   // host modules (phost.go)
	schemes   schemeState // the modules' counter totals (pschemes.go)
	fault     error       // set by a broken module: ends the run
	events    uint64      // processed, over the engine's life
	warmOn    bool        // the fabric's state outgrows a core's cache: prefetch (pwarm.go)
}

// Events is how many events the engine has processed.
func (e *PacketEngine) Events() uint64 { return e.events }

// NewPacketEngine makes a packet engine over t with the built-in ECMP
// forwarding on every switch.
func NewPacketEngine(t *Topology, cfg Config) *PacketEngine {
	e, err := NewPacketEngineLB(t, cfg, nil)
	if err != nil {
		panic(err) // without a module name nothing can fail
	}
	return e
}

// NewPacketEngineLB makes a packet engine whose switches all forward with
// the one module m, or, when m is nil, each with its own instance of the
// scheme cfg.LB with cfg.LBParams made by cfg.Modules (the built-in ECMP
// when cfg.LB is ""), as each switch runs its own program (and as
// SetSwitchLB gives them).
func NewPacketEngineLB(t *Topology, cfg Config, m lb.Module) (*PacketEngine, error) {
	def := DefaultConfig()
	if cfg.MTU <= 0 {
		cfg.MTU = def.MTU
	}
	if cfg.AckEvery <= 0 {
		cfg.AckEvery = 1
	}
	if cfg.RTONs <= 0 {
		cfg.RTONs = def.RTONs
	}
	if cfg.NackIntervalNs == 0 {
		cfg.NackIntervalNs = def.NackIntervalNs
	}
	if cfg.MaxSimNs <= 0 {
		cfg.MaxSimNs = def.MaxSimNs
	}
	if cfg.ReorderTimeoutNs <= 0 {
		cfg.ReorderTimeoutNs = def.ReorderTimeoutNs
	}
	normalize(&cfg.SwitchConfig)
	n := len(t.links)
	e := &PacketEngine{topo: t, cfg: cfg, portSet: newPortSet(t), links: make([]plink, n), rev: make([]int32, n),
		lc: make([]lctr, 8*n), portLinks: portLinks(t), rng: seedRand(cfg.Seed), warmOn: warmWorth(n)}
	sw := map[string]int32{}
	for i, l := range t.links {
		pl := plink{rate: l.rate, delay: l.delay, from: l.from, fromPort: l.fromPort, to: l.to, atSwitch: !t.isHost[l.from]}
		if pl.atSwitch {
			id, ok := sw[l.from]
			if !ok {
				id = int32(len(sw))
				sw[l.from] = id
			}
			pl.sw = id
		}
		e.links[i] = pl
		e.rev[i] = -1
	}
	e.swID, e.hostID, e.cands, e.hopIDs = sw, map[string]int32{}, make([][]int32, len(sw)), map[string]int32{}
	e.pathSets = make([][]*pathSet, len(sw))
	e.sws = make([]*swView, len(sw))
	for name, id := range sw {
		e.sws[id] = &swView{e: e, id: id, name: name, salt: switchSalt(name, cfg.Seed)}
	}
	e.mods, e.arrives = make([]swMod, len(sw)), make([]bool, len(sw))
	for i := range e.mods {
		mi := m
		if mi == nil && cfg.LB != "" {
			if cfg.Modules == nil {
				return nil, fmt.Errorf("fabric: load-balancing scheme %q but no module registry (Config.Modules)", cfg.LB)
			}
			var err error
			if mi, err = cfg.Modules.New(cfg.LB, cfg.LBParams); err != nil {
				return nil, err
			}
		}
		if mi != nil {
			e.setModule(int32(i), mi)
		}
	}
	for h := range t.isHost {
		e.hostID[h] = int32(len(e.hostID))
		e.hostName = append(e.hostName, h)
	}
	for _, v := range e.sws {
		e.salts = append(e.salts, v.salt)
	}
	e.attach = make([]int32, len(e.hostID))
	for h, id := range e.hostID {
		e.attach[id] = -1
		if home, ok := t.homeSwitch(h); ok {
			e.attach[id] = sw[home]
		}
	}
	if err := e.initHosts(cfg); err != nil {
		return nil, err
	}
	e.hostDC = make([]DCQCN, len(e.hostID))
	for i := range e.hostDC {
		e.hostDC[i] = cfg.DCQCN
	}
	e.swUsed, e.swHeadroom, e.swc = make([]int64, len(sw)), make([]int64, len(sw)), make([]SwitchConfig, len(sw))
	for i := range e.swc {
		e.swc[i] = cfg.SwitchConfig
	}
	for i, l := range t.links {
		e.links[i].swTo = -1
		if id, ok := sw[l.to]; ok {
			e.links[i].swTo = id
		}
	}
	e.reserveHeadroom()
	e.tiers()
	for i, l := range t.links {
		for _, j := range t.out[l.to] {
			if r := t.links[j]; r.to == l.from && r.fromPort == l.toPort && r.toPort == l.fromPort {
				e.rev[i] = int32(j)
			}
		}
	}
	for i := range e.mods { // the engine is whole: its links lead where they do
		e.install(int32(i))
	}
	return e, nil
}

// Counters implements Engine.
func (e *PacketEngine) Counters() *Counters {
	e.foldCounters()
	c := countersOf(e.ports)
	c.Transport = true
	c.Schemes = e.schemeCounters()
	return c
}

// PortCounters implements Engine.
func (e *PacketEngine) PortCounters(k PortKey) (PortCounters, bool) {
	for _, li := range e.portLinks[k] {
		e.foldLink(li)
	}
	return portCounters(e.ports, k)
}

// Run implements Engine. Times in flows and results are ns; the engine
// runs in ps.
func (e *PacketEngine) Run(ctx context.Context, flows []Flow, opt RunOptions) ([]Result, error) {
	sorted := append([]Flow(nil), flows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	e.now, e.qps, e.results = 0, make([]*qp, 0, len(sorted)), make([]Result, len(sorted))
	// Every run draws from the seed's stream afresh (ECN marking ...): a
	// point's results do not depend on the points the engine ran before.
	e.rng = seedRand(e.cfg.Seed)
	e.ev.reset()
	e.waitOn, e.children, e.byID = map[int]int{}, map[int][]int{}, map[int]int{}
	for i, f := range sorted {
		if _, dup := e.byID[f.ID]; dup {
			return nil, fmt.Errorf("fabric: duplicate flow id %d", f.ID)
		}
		e.byID[f.ID] = i
	}
	e.left = len(sorted)
	e.qpToR, e.qf = e.qpToR[:0], make([]qpFwd, len(sorted))
	e.resetModules()
	// The QPs' state is one array: flows started together sit together in
	// memory, and the collector has one object to follow, not one per flow.
	slab := make([]qp, len(sorted))
	e.qpSlab = slab
	for i, f := range sorted {
		e.results[i] = Result{ID: f.ID, Bytes: f.Bytes}
		q := &slab[i]
		*q = qp{idx: int32(i), flow: f}
		e.qps = append(e.qps, q)
		e.qpToR = append(e.qpToR, [2]int32{-1, -1})
		p, err := e.route(f)
		if err == nil && f.Bytes <= 0 {
			err = fmt.Errorf("flow %d: no bytes to send", f.ID)
		}
		if err != nil {
			e.results[i].Err = err.Error()
			q.senderDone = true
			e.left--
			continue
		}
		for _, li := range p {
			q.path = append(q.path, int32(li))
			e.results[i].Path = append(e.results[i].Path, e.topo.links[li].from)
		}
		e.results[i].Path = append(e.results[i].Path, f.Dst)
		for k := len(p) - 1; k >= 0; k-- {
			q.rpath = append(q.rpath, e.rev[p[k]])
		}
		q.srcAcc, q.dstAcc = e.lfrom[p[0]], e.lto[p[len(p)-1]]
		e.qpToR[i] = [2]int32{e.links[p[0]].swTo, -1}
		if last := &e.links[p[len(p)-1]]; last.atSwitch {
			e.qpToR[i][1] = last.sw
		}
		q.fwdKey, q.revKey = flowKey(f.Src, f.Dst, f.ID), flowKey(f.Dst, f.Src, f.ID)
		q.srcIdx, q.dstIdx = e.hostID[f.Src], e.hostID[f.Dst]
		e.qf[i] = qpFwd{fwdKey: q.fwdKey, revKey: q.revKey, srcIdx: q.srcIdx, dstIdx: q.dstIdx}
		q.rp, q.np = &e.hostDC[q.srcIdx], &e.hostDC[q.dstIdx]
		e.bindHost(q)
		switch {
		case f.TOS > 0: // the NIC classified the flow: any data priority
			q.prio = uint8(min(max(f.Priority, 0), ctrlPrio-1))
		case f.Priority > 0 && f.Priority < ctrlPrio:
			q.prio = uint8(f.Priority)
		default:
			q.prio = roceQueue
		}
		q.dscp, q.ect = -1, true
		if f.TOS > 0 {
			q.dscp, q.ect = int8(f.TOS>>2&63), f.TOS&3 != 0
		}
		q.line = e.topo.links[p[0]].rate
		q.npkts = (f.Bytes + int64(e.cfg.MTU) - 1) / int64(e.cfg.MTU)
		switch e.cfg.Transport {
		case "", "gbn":
		case "irn":
			e.setupIRN(q)
		default:
			return nil, fmt.Errorf("fabric: unknown transport %q (gbn or irn)", e.cfg.Transport)
		}
		for _, a := range f.After {
			if _, ok := e.byID[a]; !ok {
				return nil, fmt.Errorf("fabric: flow %d depends on unknown flow %d", f.ID, a)
			}
			e.waitOn[i]++
			e.children[a] = append(e.children[a], i)
		}
	}
	for i, f := range sorted {
		if e.waitOn[i] == 0 && e.results[i].Err == "" {
			e.ev.push(qpEvent(f.Start*1000, evQPStart, int32(i), 0))
		}
	}
	if opt.SampleEvery > 0 && opt.OnSample != nil {
		e.ev.push(event{t: opt.SampleEvery * 1000, key: uint64(evSample)})
	}
	if err := e.loop(ctx, opt); err != nil {
		return nil, err
	}
	for i, q := range e.qps {
		if !q.senderDone {
			e.results[i].Err = fmt.Sprintf("did not complete within %d ns of simulated time", e.cfg.MaxSimNs)
		}
	}
	e.settle()
	if opt.OnSample != nil {
		opt.OnSample(e.now/1000, e.Counters())
	}
	return e.results, nil
}

// loop runs events until every flow is done, the queue is empty or the
// simulated time is up; an error (the context's, a module's fault) ends
// the run with the fabric settled.
func (e *PacketEngine) loop(ctx context.Context, opt RunOptions) error {
	limit := e.cfg.MaxSimNs * 1000
	for n := 0; e.ev.len() > 0 && e.left > 0; n++ {
		if n%65536 == 0 && ctx.Err() != nil {
			e.settle() // the next run starts on an idle fabric
			return ctx.Err()
		}
		if e.fault != nil {
			err := e.fault
			e.fault = nil
			e.settle()
			return err
		}
		ev := e.ev.pop()
		if ev.t > limit {
			break
		}
		e.now = ev.t
		e.events++
		if e.warmOn {
			e.warm()
		}
		switch ev.kind() {
		case evTxDone:
			e.onTxDone(ev)
		case evArrive:
			e.onArrive(ev)
		case evPFC:
			e.onPFC(ev)
		case evQPStart:
			e.startQP(e.qps[ev.id])
		case evQPSend:
			if q := e.qps[ev.id]; ev.arg == q.sendGen {
				q.sendPending = false
				e.trySend(q)
			}
		case evRTO:
			e.onRTO(ev)
		case evDCQCN:
			e.onDCQCN(ev)
		case evLB:
			e.onLB(ev)
		case evLBTick:
			e.onTick(ev)
		case evRQTimeout:
			e.onRQTimeout(ev)
		case evSample:
			opt.OnSample(e.now/1000, e.Counters())
			e.ev.push(event{t: e.now + opt.SampleEvery*1000, key: uint64(evSample)})
		}
	}
	return nil
}

// flowDone records a finished flow and releases its dependants.
func (e *PacketEngine) flowDone(q *qp) {
	r := &e.results[q.idx]
	r.Start, r.End = q.start/1000, q.end/1000
	e.left--
	for _, c := range e.children[q.flow.ID] {
		if e.waitOn[c]--; e.waitOn[c] == 0 {
			e.ev.push(qpEvent(max(e.now, e.qps[c].flow.Start*1000), evQPStart, int32(c), 0))
		}
	}
}

// settle ends a run: what is still queued or in flight is discarded (the
// flows are done), pauses are lifted, and queue depths read zero.
func (e *PacketEngine) settle() {
	for e.ev.len() > 0 {
		ev := e.ev.pop()
		if ev.pkt != nil {
			e.pool.put(ev.pkt)
		}
		if ev.kind() == evPFC && ev.arg>>8&0xff == pfcFrame { // on the wire: its port gets it
			e.lfrom[ev.id].pfcRx[uint8(ev.arg)]++
		}
	}
	e.fns, e.freeFns = e.fns[:0], e.freeFns[:0]
	for i := range e.links {
		l := &e.links[i]
		for p := range l.q {
			for pk := l.pop(p); pk != nil; pk = l.pop(p) {
				e.pool.put(pk)
			}
			if l.paused[p] {
				e.lfrom[i].pauseRxNs[p] += float64(e.now-l.pauseSince[p]) / 1000
			}
			if l.xoffSent[p] {
				e.lto[i].pauseTxNs[p] += float64(e.now-l.xoffAt[p]) / 1000
			}
			l.paused[p], l.inBytes[p], l.xoffSent[p] = false, 0, false
			e.lfrom[i].q[p].depth, e.lc[i<<3|p].depth = 0, 0
		}
		l.busy, l.waiting = false, l.waiting[:0]
	}
	e.settleReorder()
	for i := range e.swUsed {
		e.swUsed[i] = 0
	}
}

// Configure changes the engine's configuration between runs. If it
// changes the switch settings (Config.SwitchConfig), every switch takes
// them, replacing what ConfigureSwitch set, and likewise every host the
// DCQCN settings, replacing what ConfigureHost set; otherwise each keeps
// its own.
func (e *PacketEngine) Configure(fn func(*Config)) {
	old, oldDC := e.cfg.SwitchConfig, e.cfg.DCQCN
	fn(&e.cfg)
	normalize(&e.cfg.SwitchConfig)
	if e.cfg.SwitchConfig != old {
		for i := range e.swc {
			e.swc[i] = e.cfg.SwitchConfig
		}
	}
	if e.cfg.DCQCN != oldDC {
		for i := range e.hostDC {
			e.hostDC[i] = e.cfg.DCQCN
		}
	}
	e.reserveHeadroom()
}

// ConfigureHost changes one host RNIC's DCQCN settings between runs (what
// its provisioned sysfs or debugfs values say). Its flows react with them
// as senders and notify with them as receivers.
func (e *PacketEngine) ConfigureHost(name string, fn func(*DCQCN)) error {
	id, err := lookup(e.hostID, "host", name)
	if err != nil {
		return err
	}
	fn(&e.hostDC[id])
	return nil
}

// HostDCQCN is a host RNIC's current DCQCN settings.
func (e *PacketEngine) HostDCQCN(name string) (DCQCN, bool) {
	id, ok := e.hostID[name]
	if !ok {
		return DCQCN{}, false
	}
	return e.hostDC[id], true
}

// ConfigureSwitch changes one switch's settings between runs (a switch's
// committed QoS configuration reaches the twin this way).
func (e *PacketEngine) ConfigureSwitch(name string, fn func(*SwitchConfig)) error {
	id, err := lookup(e.swID, "switch", name)
	if err != nil {
		return err
	}
	fn(&e.swc[id])
	normalize(&e.swc[id])
	e.reserveHeadroom()
	return nil
}

// lookup is the index of a named switch or host.
func lookup(ids map[string]int32, kind, name string) (int32, error) {
	id, ok := ids[name]
	if !ok {
		return 0, fmt.Errorf("fabric: no %s %q", kind, name)
	}
	return id, nil
}

// SwitchConfigOf is a switch's current settings.
func (e *PacketEngine) SwitchConfigOf(name string) (SwitchConfig, bool) {
	id, ok := e.swID[name]
	if !ok {
		return SwitchConfig{}, false
	}
	return e.swc[id], true
}

// normalize fills the settings a switch cannot do without and spells out
// the masks' zero values, so that the per-packet path reads them as they
// are: LosslessPrios 0 is priority 3, ECNPrios 0 every queue; a DSCP class
// of 7 (the control queue) is 6.
func normalize(c *SwitchConfig) {
	if c.LosslessPrios == 0 {
		c.LosslessPrios = 1 << roceQueue
	}
	if c.ECNPrios == 0 {
		c.ECNPrios = 0xff
	}
	for d, tc := range c.DSCPToTC {
		c.DSCPToTC[d] = min(tc, ctrlPrio-1)
	}
	def := DefaultConfig()
	if c.PFCAlpha <= 0 {
		c.PFCAlpha = def.PFCAlpha
	}
	if c.DTAlpha <= 0 {
		c.DTAlpha = def.DTAlpha
	}
}

// reserveHeadroom reserves each switch's PFC headroom: HeadroomBytes per
// ingress port.
func (e *PacketEngine) reserveHeadroom() {
	for i := range e.swHeadroom {
		e.swHeadroom[i] = 0
	}
	for _, l := range e.links {
		if l.swTo >= 0 {
			e.swHeadroom[l.swTo] += e.swc[l.swTo].HeadroomBytes
		}
	}
}

// Config is the engine's fabric-wide configuration: what each switch,
// host and load-balancing module starts with. ConfigureSwitch,
// ConfigureHost and SetSwitchLB change single devices without it (see
// SwitchConfigOf, HostDCQCN); Config.LB and LBParams name the module of
// NewPacketEngineLB and are not read after it.
func (e *PacketEngine) Config() Config { return e.cfg }

// seedRand is the engine's random stream's start for a seed.
func seedRand(seed int64) uint64 { return uint64(seed)*0x9e3779b97f4a7c15 + 1 }
