package reunion

import "github.com/labctl/labctl/emulator/fabric/lb"

// bottleneckWord is the header word with the bottleneck link: the two
// switch IDs, each plus one (0: none yet).
const bottleneckWord = 0

// maskBits is how many (path, hop) bits a notification's highly utilised
// links take: header words 1 to 3.
const maskBits = 192

func hasBit(h *lb.Header, b int) bool {
	return b < maskBits && h.Words[1+b/64]&(1<<(b%64)) != 0
}

// rxFlow is an elephant's row at its destination ToR.
type rxFlow struct {
	seen      int64 // epoch+1 when last listed in seen
	src, path int32 // its source ToR and latest path
}

// bneck is a Bottleneck Link Table row: the last elephant seen marked
// with the link, and its source ToR.
type bneck struct {
	link      int64 // the header's bottleneck word
	flow, src int32
}

// portCounts count, per link, the distinct elephants it carried in the
// current interval (now / s: every switch's clock agrees), up to t+1.
type portCounts struct {
	epoch []int64 // interval+1 the counts are for
	n     []int32
	flows []int32 // t+1 per link
}

func (c *portCounts) count(nLinks int, link int32, flow int32, epoch int64, t int) int {
	if c.epoch == nil {
		c.epoch, c.n, c.flows = make([]int64, nLinks), make([]int32, nLinks), make([]int32, nLinks*(t+1))
	}
	if c.epoch[link] != epoch+1 {
		c.epoch[link], c.n[link] = epoch+1, 0
	}
	n := int(c.n[link])
	row := c.flows[int(link)*(t+1):][:t+1]
	for _, f := range row[:n] {
		if f == flow {
			return n
		}
	}
	if n <= t {
		row[n] = flow
		c.n[link]++
		n++
	}
	return n
}

func (c *portCounts) reset() { clear(c.epoch) }

// Arrive runs the collision check at the source ToR and every switch
// after it but the destination ToR, and fills the destination ToR's
// tables.
func (m *Module) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind != lb.Data || p.Hdr.Flags&flagElephant == 0 || p.Flow < 0 {
		return lb.Normal
	}
	switch p.Role {
	case lb.DstToR:
		if p.Hdr.Flags&lb.FlagPinned != 0 {
			m.arriveDst(sw, p)
		}
	case lb.SameToR:
	default:
		m.countPath(sw, p.Flow, out.Link)
		n := m.ports.count(sw.NumLinks(), out.Link, p.Flow, sw.Now()/m.intervalNs, m.t)
		if n > m.t && p.Hdr.Words[bottleneckWord] == 0 { // the first collision on the path wins
			from, to := sw.LinkEnds(out.Link)
			p.Hdr.Words[bottleneckWord] = int64(from+1)<<32 | int64(to+1)
			m.stats.Marked++
		}
	}
	return lb.Normal
}

func (m *Module) arriveDst(sw lb.Switch, p *lb.Packet) {
	s := m.sw(sw)
	r := s.rx.Get(p.Flow)
	if r.seen != s.epoch+1 {
		r.seen = s.epoch + 1
		s.seen = append(s.seen, p.Flow)
	}
	r.src, r.path = int32(p.SrcToR), p.Hdr.Path
	w := p.Hdr.Words[bottleneckWord]
	if w == 0 {
		return
	}
	for i := range s.bneck { // later packets overwrite: the last one seen is named
		if s.bneck[i].link == w {
			s.bneck[i].flow, s.bneck[i].src = p.Flow, int32(p.SrcToR)
			return
		}
	}
	s.bneck = append(s.bneck, bneck{link: w, flow: p.Flow, src: int32(p.SrcToR)})
}

// notify is Algorithm 1 at a destination ToR's interval end: count the
// elephants seen per link of their latest paths, then send each
// bottleneck link's flow's source ToR one notification with the flow, the
// link and the highly utilised links on that source's paths here.
func (m *Module) notify(sw lb.Switch, s *swState) {
	if len(s.bneck) > 0 {
		me := sw.ID()
		clear(s.counts)
		for _, flow := range s.seen {
			r := s.rx.Get(flow)
			for _, e := range sw.Path(int(r.src), me, int(r.path)) {
				s.counts[e.Link]++
			}
		}
		for _, b := range s.bneck {
			h := &m.ctl
			*h = lb.Header{Flags: lb.FlagNotify, FBPath: int32(b.link>>32) - 1, FBMetric: int32(b.link&0xffffffff) - 1}
			h.Words[0] = int64(b.flow)
			for id, n := 0, sw.Paths(int(b.src), me); id < n; id++ {
				hops := sw.Path(int(b.src), me, id)
				for k, e := range hops {
					if bit := id*len(hops) + k; bit < maskBits && m.high(s.counts[e.Link]) {
						h.Words[1+bit/64] |= 1 << (bit % 64)
					}
				}
			}
			if sw.Send(int(b.src), m.ctrlBytes, h) {
				m.stats.Notifies++
				m.stats.CtrlBytes += int64(m.ctrlBytes)
			}
		}
	}
	s.seen, s.bneck = s.seen[:0], s.bneck[:0]
}

func (m *Module) high(n int32) bool {
	if m.gt {
		return n > int32(m.t)
	}
	return n >= int32(m.t)
}
