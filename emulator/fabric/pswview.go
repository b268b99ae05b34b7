package fabric

import "github.com/labctl/labctl/emulator/fabric/lb"

// swView is a module's view of its switch (lb.Switch).
type swView struct {
	e     *PacketEngine
	id    int32
	name  string
	salt  uint64
	ports []lb.Egress // on first use
}

var _ lb.Switch = (*swView)(nil)

func (v *swView) Name() string             { return v.name }
func (v *swView) ID() int                  { return int(v.id) }
func (v *swView) Tier() lb.Tier            { return v.e.tier[v.id] }
func (v *swView) Salt() uint64             { return v.salt }
func (v *swView) Now() int64               { return v.e.now / 1000 }
func (v *swView) NumSwitches() int         { return len(v.e.sws) }
func (v *swView) NumLinks() int            { return len(v.e.links) }
func (v *swView) SwitchName(id int) string { return v.e.sws[id].name }
func (v *swView) SwitchTier(id int) lb.Tier {
	return v.e.tier[id]
}

func (v *swView) SwitchID(name string) (int, bool) {
	id, ok := v.e.swID[name]
	return int(id), ok
}

func (v *swView) QueueBytes(link int32, prio int) int64 { return v.e.links[link].q[prio].bytes }

func (v *swView) QueueTotals(link int32, prio int) (in, out int64) {
	f := &v.e.links[link].q[prio]
	return f.in, f.in - f.bytes
}

func (v *swView) LinkGbps(link int32) float64  { return v.e.links[link].rate }
func (v *swView) LinkDelayNs(link int32) int64 { return v.e.links[link].delay }

func (v *swView) LinkEnds(link int32) (from, to int) {
	l := &v.e.links[link]
	from, to = -1, int(l.swTo)
	if l.atSwitch {
		from = int(l.sw)
	}
	return from, to
}

func (v *swView) Ports() []lb.Egress {
	if v.ports == nil {
		v.ports = []lb.Egress{}
		for _, li := range v.e.topo.out[v.name] {
			v.ports = append(v.ports, v.e.egress(int32(li)))
		}
	}
	return v.ports
}

func (v *swView) Paths(from, to int) int { return len(v.e.paths(int32(from), int32(to)).eg) }

func (v *swView) Path(from, to, id int) []lb.Egress {
	ps := v.e.paths(int32(from), int32(to))
	if id < 0 || id >= len(ps.eg) {
		return nil
	}
	return ps.eg[id]
}

// Pin works only on the packet the module is deciding for in Select, at
// its source ToR: the path then starts with the link the engine sends it on.
func (v *swView) Pin(p *lb.Packet, id int) bool {
	e := v.e
	if !e.selecting || p != &e.pv || p.Kind == lb.Control || int32(p.SrcToR) != v.id {
		return false
	}
	return e.pin(e.pvPkt, v.id, int32(p.DstToR), id)
}
