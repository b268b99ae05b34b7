package reorder

import "github.com/labctl/labctl/emulator/fabric/lb"

// Config are the destination ToR's timing parameters, in ns.
type Config struct {
	// MarginNs is added to a queue's predicted release time (the tail's
	// expected arrival) before the queue is resumed without it; ConWeave's
	// code uses 8 us ("for uncertainty").
	MarginNs int64
	// DefaultWaitNs is the predicted wait when the epoch gave no old-path
	// packet to time the tail by (a REROUTED packet came first); ConWeave's
	// code uses 200 us.
	DefaultWaitNs int64
}

// DefaultConfig is ConWeave's code's setting.
func DefaultConfig() Config { return Config{MarginNs: 8_000, DefaultWaitNs: 200_000} }

// Stats count a Dest's work over its life.
type Stats struct {
	Held       int64 // REROUTED packets put in a reorder queue
	Queues     int64 // reorder queues taken (one per reroute that needed one)
	ByTail     int64 // queues released by their tail
	Expired    int64 // queues released by their deadline (the engine's timeout resumed them)
	Fallbacks  int64 // reroutes that found no free queue: their early packets went on unordered
	Stragglers int64 // packets of an older epoch, passed through
}

// Dest is the destination ToR's reordering state, for every switch a
// module runs on (keyed by Switch.ID, then by flow index).
type Dest struct {
	cfg   Config
	sws   []FlowTable[rxFlow]
	stats Stats
}

// rxFlow is one flow's state at its destination ToR.
type rxFlow struct {
	epoch    int64
	phase1   bool  // the epoch's tail has passed (or the epoch began with it)
	cache    bool  // an old-path packet of this epoch has been seen
	p0Tx     int64 // its departure from the source ToR
	p0Rx     int64 // its arrival here
	tailTx   int64 // the tail's departure from the source ToR
	q        lb.Queue
	deadline int64 // when q is resumed without the tail
	ticking  bool  // a Tick for this flow is pending
	fellBack bool  // this epoch's reroute found no queue
}

// New is a Dest with cfg (zero fields take DefaultConfig's).
func New(cfg Config) *Dest {
	def := DefaultConfig()
	if cfg.MarginNs <= 0 {
		cfg.MarginNs = def.MarginNs
	}
	if cfg.DefaultWaitNs <= 0 {
		cfg.DefaultWaitNs = def.DefaultWaitNs
	}
	return &Dest{cfg: cfg}
}

// Stats are the counters so far.
func (d *Dest) Stats() Stats { return d.stats }

// Reset forgets every flow (a run starts; the engine has emptied the
// queues).
func (d *Dest) Reset() {
	for i := range d.sws {
		d.sws[i].Reset()
	}
}

// flow is flow i's state at switch sw.
func (d *Dest) flow(sw int, i int32) *rxFlow {
	for len(d.sws) <= sw {
		d.sws = append(d.sws, FlowTable[rxFlow]{})
	}
	return d.sws[sw].Get(i)
}

// Arrive takes a data packet at its destination ToR (the module's
// Arriver.Arrive passes it on for p.Role == lb.DstToR): it returns the
// queue the packet waits in (lb.Normal or a reorder queue), and whether
// the packet is of the flow's current epoch (false: an older epoch's
// straggler or an unstamped packet, which the scheme should not answer).
func (d *Dest) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) (lb.Queue, bool) {
	ep := Epoch(p.Hdr)
	if p.Kind != lb.Data || ep == 0 || p.Flow < 0 {
		return lb.Normal, false
	}
	f := d.flow(sw.ID(), p.Flow)
	now := sw.Now()
	if f.q != lb.Normal && now > f.deadline {
		d.release(sw, f) // the engine's timeout resumed it: reordering is over
		d.stats.Expired++
		f.phase1 = true
	}
	tail, rerouted := p.Hdr.Flags&lb.FlagTail != 0, p.Hdr.Flags&lb.FlagRerouted != 0
	early := false // a REROUTED packet before the tail
	switch {
	case ep < f.epoch:
		d.stats.Stragglers++
		return lb.Normal, false
	case ep > f.epoch:
		if f.q != lb.Normal { // a new epoch while reordering: the old one is over
			d.release(sw, f)
		}
		*f = rxFlow{epoch: ep, phase1: tail, ticking: f.ticking}
		early = rerouted && !tail
	default:
		early = rerouted && !f.phase1
	}
	if !rerouted {
		f.cache, f.p0Tx, f.p0Rx = true, p.Hdr.TS, now
	}
	if tail || rerouted {
		f.tailTx = p.Hdr.TS2
	}
	// The tail's expected arrival: the last old-path packet's arrival plus
	// the gap between its departure and the tail's at the source.
	wait, base := d.cfg.DefaultWaitNs, now
	if f.cache {
		wait, base = max(f.tailTx-f.p0Tx, 0), f.p0Rx
	}
	switch {
	case tail:
		f.phase1 = true
		if f.q != lb.Normal {
			d.release(sw, f) // served after the tail, which is queued first
			d.stats.ByTail++
		}
		return lb.Normal, true
	case !rerouted:
		if f.q != lb.Normal { // the old path still delivers: wait longer
			f.deadline = now + wait + d.cfg.MarginNs
			sw.Pause(f.q, f.deadline-now)
		}
		return lb.Normal, true
	case !early:
		return lb.Normal, true
	case f.q != lb.Normal:
		d.stats.Held++
		return f.q, true
	case f.fellBack:
		return lb.Normal, true
	}
	q, ok := sw.AllocQueue(out.Link, int(p.Priority))
	if !ok {
		f.fellBack = true
		d.stats.Fallbacks++
		sw.Fallback()
		return lb.Normal, true
	}
	f.q, f.deadline = q, max(base+wait+d.cfg.MarginNs, now+1)
	sw.Pause(q, f.deadline-now)
	d.stats.Queues++
	d.stats.Held++
	if !f.ticking {
		f.ticking = true
		sw.Schedule(f.deadline-now+1, int64(p.Flow)) // after the engine's timeout
	}
	return q, true
}

// release resumes and frees f's queue: what it holds goes after what the
// port's own queue holds now, and the queue returns to the port once
// drained.
func (d *Dest) release(sw lb.Switch, f *rxFlow) {
	sw.Resume(f.q)
	sw.FreeQueue(f.q)
	f.q = lb.Normal
}

// Tick takes the timer Arrive set for a flow's queue (the module's
// lb.Ticker passes on non-negative args, which are flow indexes; schemes
// keep negative ones for themselves). A queue whose deadline has passed
// has been resumed by the engine's timeout; giving it back here keeps a
// flow that sends nothing more from holding it for the rest of the run.
func (d *Dest) Tick(sw lb.Switch, flow int64) {
	f := d.flow(sw.ID(), int32(flow))
	f.ticking = false
	if f.q == lb.Normal {
		return
	}
	if now := sw.Now(); now <= f.deadline {
		f.ticking = true
		sw.Schedule(f.deadline-now+1, flow)
		return
	}
	d.release(sw, f)
	d.stats.Expired++
	f.phase1 = true
}
