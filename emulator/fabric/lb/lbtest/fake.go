package lbtest

import "github.com/labctl/labctl/emulator/fabric/lb"

// FakeSwitch is a switch view for testing a module's hooks without an
// engine: ToR Self at time Clock, with 4 paths to every other switch,
// path i being Routes[i], link l's priority-3 queue Depth[l] bytes deep
// (other priorities empty), and salt 11. Pin marks the packet pinned to
// the path asked for; control packets sent and packets pinned are
// counted; reorder queues are always given (numbered from 1); pauses,
// resumes, frees, timers and fallbacks are ignored. A test embeds it and
// adds what its module reads besides; any other method of lb.Switch
// panics (the embedded interface is nil).
type FakeSwitch struct {
	lb.Switch
	Self   int      // ID
	Clock  int64    // Now, ns
	Sent   int      // control packets sent
	Pins   int      // packets pinned
	Queues lb.Queue // the last reorder queue given

	Routes [][]lb.Egress // the hops of each path, by path ID
	Depth  []int64       // bytes queued at priority 3, by link
}

func (s *FakeSwitch) ID() int            { return s.Self }
func (s *FakeSwitch) Now() int64         { return s.Clock }
func (s *FakeSwitch) Salt() uint64       { return 11 }
func (s *FakeSwitch) Paths(int, int) int { return 4 }
func (s *FakeSwitch) Tier() lb.Tier      { return lb.TierToR }

// Path is Routes[id], whatever the ToRs.
func (s *FakeSwitch) Path(_, _, id int) []lb.Egress { return s.Routes[id] }

// QueueBytes is Depth[l] at priority 3, 0 at the others.
func (s *FakeSwitch) QueueBytes(l int32, prio int) int64 {
	if prio == 3 {
		return s.Depth[l]
	}
	return 0
}

// Pin pins p to path id.
func (s *FakeSwitch) Pin(p *lb.Packet, id int) bool {
	p.Hdr.Path, s.Pins = int32(id), s.Pins+1
	p.Hdr.Flags |= lb.FlagPinned
	return true
}

func (s *FakeSwitch) Send(int, int, *lb.Header) bool         { s.Sent++; return true }
func (s *FakeSwitch) AllocQueue(int32, int) (lb.Queue, bool) { s.Queues++; return s.Queues, true }
func (s *FakeSwitch) Pause(lb.Queue, int64)                  {}
func (s *FakeSwitch) Resume(lb.Queue)                        {}
func (s *FakeSwitch) FreeQueue(lb.Queue)                     {}
func (s *FakeSwitch) Schedule(int64, int64)                  {}
func (s *FakeSwitch) Fallback()                              {}

// Keep is a module registry (a fabric.Modules or HostModules) that keeps
// what it makes, so that a test can read the modules' counters after a
// run.
type Keep[M any] struct {
	Make func(name string, params map[string]string) (M, error)
	Made []M
}

// New makes a module with Make and keeps it.
func (k *Keep[M]) New(name string, params map[string]string) (M, error) {
	m, err := k.Make(name, params)
	k.Made = append(k.Made, m)
	return m, err
}
