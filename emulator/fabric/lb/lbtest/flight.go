package lbtest

import "github.com/labctl/labctl/emulator/fabric/lb"

// Flight is up to 32 data packets in flight between two FakeSwitches in
// a hook test, each a header and the time it lands. It allocates
// nothing, so a test can count a module's own allocations per packet.
type Flight struct {
	air [32]struct {
		h  lb.Header
		at int64 // ns; 0: the slot is free
	}
}

// Land hands each packet due by now to arrive, earliest first, freeing
// its slot (the header stays valid until a Launch reuses it).
func (f *Flight) Land(now int64, arrive func(at int64, h *lb.Header)) {
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
		arrive(at, &s.h)
	}
}

// Launch hands a free slot's cleared header to send, which fills it (a
// Select) and says when the packet lands. With every slot taken it does
// nothing.
func (f *Flight) Launch(send func(h *lb.Header) (at int64)) {
	for i := range f.air {
		if s := &f.air[i]; s.at == 0 {
			s.h = lb.Header{}
			s.at = send(&s.h)
			return
		}
	}
}
