package lbtest

import "github.com/labctl/labctl/emulator/fabric/lb"

// Flight is up to 32 data packets of flow 3 in flight from ToR 0 to
// ToR 1 in a hook test, each a header and the time it lands, seen through
// one packet view, as the engine's. It allocates nothing, so a test can
// count a module's own allocations per packet.
type Flight struct {
	air [32]struct {
		h  lb.Header
		at int64 // ns; 0: the slot is free
	}
	pkt lb.Packet
}

// Land hands each packet due by now to arrive, earliest first, as the
// destination ToR sees it, freeing its slot (the header stays valid
// until a Launch reuses it).
func (f *Flight) Land(now int64, arrive func(at int64, p *lb.Packet)) {
	for {
		k := -1
		for i := range f.air {
			if a := f.air[i].at; a != 0 && a <= now && (k < 0 || a < f.air[k].at) {
				k = i
			}
		}
		if k < 0 {
			return
		}
		s := &f.air[k]
		at := s.at
		s.at = 0
		f.pkt = lb.Packet{Kind: lb.Data, Role: lb.DstToR, SrcToR: 0, DstToR: 1, Flow: 3, Hdr: &s.h}
		arrive(at, &f.pkt)
	}
}

// Launch hands a new packet with a free slot's cleared header to send,
// as the source ToR sees it; send fills it (a Select) and says when it
// lands. With every slot taken it does nothing.
func (f *Flight) Launch(send func(p *lb.Packet) (at int64)) {
	for i := range f.air {
		if s := &f.air[i]; s.at == 0 {
			s.h = lb.Header{}
			f.pkt = lb.Packet{Kind: lb.Data, Role: lb.SrcToR, SrcToR: 0, DstToR: 1, Flow: 3, Hdr: &s.h}
			s.at = send(&f.pkt)
			return
		}
	}
}
