package fabric

import (
	"cmp"
	"reflect"
	"slices"

	"github.com/labctl/labctl/emulator/fabric/lb"
)

// Scheme counters: what the switches' and hosts' load-balancing modules
// count (lb.Counting: flowlets, reroutes, elephants, CNMs ...), gathered
// per switch when the engine's counters are read (Counters), never per
// packet. Modules restart their counts with each run, some keep them for
// life; the engine folds them into totals that, like a port's counters,
// only grow: it reads every module before a run resets it and after, and
// takes a value below the last one read as a restart.

// SchemeCounts are one switch's scheme counters since the engine was
// made: its own module's, and the sum of its hosts' modules' (the hosts
// it is the first hop of), and per egress port toward another switch the
// modules' per-link counts (lb.LinkCounting: Reunion's elephants per
// path), summed over the modules that count the link. Names are lb's
// Count vocabulary, in the order the modules give them; a scheme that
// counts nothing has none.
type SchemeCounts struct {
	Switch []lb.Count
	Hosts  []lb.Count
	Ports  []PortCounts // by port name
}

// PortCounts are one egress port's per-link scheme counters.
type PortCounts struct {
	Port   string
	Counts []lb.Count
}

// tally is one counter of one module: the last value read, and the total
// carried over the module's restarts.
type tally struct {
	name        string
	last, total uint64
}

// schemeState is the engine's scheme counter totals, by switch ID and by
// host index, and a scratch slice for reading a module.
type schemeState struct {
	sw, host [][]tally
	links    [][]linkTally // by switch module, as sw
	buf      []lb.Count
	lbuf     []lb.LinkCount
}

// linkTally is one per-link counter of one module.
type linkTally struct {
	link int32
	tally
}

// observeSchemes reads every counting module into the totals.
func (e *PacketEngine) observeSchemes() {
	s := &e.schemes
	if s.sw == nil {
		s.sw, s.host = make([][]tally, len(e.mods)), make([][]tally, len(e.host.mods))
		s.links = make([][]linkTally, len(e.mods))
	}
	// A module shared by several switches (NewPacketEngineLB) counts for
	// all of them: it is read once, for the first.
	var seen []lb.Counting
	for i, m := range e.mods {
		c, ok := m.m.(lb.Counting)
		if !ok || shared(c, &seen) {
			continue
		}
		s.buf = c.Counts(s.buf[:0])
		s.sw[i] = fold(s.sw[i], s.buf)
		if lc, ok := c.(lb.LinkCounting); ok {
			s.lbuf = lc.LinkCounts(s.lbuf[:0])
			s.links[i] = foldLinks(s.links[i], s.lbuf)
		}
	}
	for i, h := range e.host.mods {
		if h == nil {
			continue
		}
		if c, ok := h.m.(lb.Counting); ok {
			s.buf = c.Counts(s.buf[:0])
			s.host[i] = fold(s.host[i], s.buf)
		}
	}
}

// shared says whether c was read before (it is added to seen if not).
func shared(c lb.Counting, seen *[]lb.Counting) bool {
	if !reflect.TypeOf(c).Comparable() {
		return false
	}
	for _, o := range *seen {
		if o == c {
			return true
		}
	}
	*seen = append(*seen, c)
	return false
}

// fold adds counts read now to the totals ts.
func fold(ts []tally, counts []lb.Count) []tally {
	for _, c := range counts {
		i := 0
		for i < len(ts) && ts[i].name != c.Name {
			i++
		}
		if i == len(ts) {
			ts = append(ts, tally{name: c.Name})
		}
		ts[i].add(c.Value)
	}
	return ts
}

// add takes value v read now into the total.
func (t *tally) add(v uint64) {
	if v >= t.last {
		t.total += v - t.last
	} else { // the module restarted its count
		t.total += v
	}
	t.last = v
}

// foldLinks adds per-link counts read now to the totals ts.
func foldLinks(ts []linkTally, counts []lb.LinkCount) []linkTally {
	for _, c := range counts {
		i := 0
		for i < len(ts) && (ts[i].link != c.Link || ts[i].name != c.Name) {
			i++
		}
		if i == len(ts) {
			ts = append(ts, linkTally{link: c.Link, tally: tally{name: c.Name}})
		}
		ts[i].add(c.Value)
	}
	return ts
}

// schemeCounters is every switch's scheme counters (none: nil).
func (e *PacketEngine) schemeCounters() map[string]SchemeCounts {
	e.observeSchemes()
	var out map[string]SchemeCounts
	add := func(sw int32, ts []tally, host bool) {
		if len(ts) == 0 || sw < 0 {
			return
		}
		if out == nil {
			out = map[string]SchemeCounts{}
		}
		name := e.sws[sw].name
		sc := out[name]
		if host {
			sc.Hosts = addCounts(sc.Hosts, ts)
		} else {
			sc.Switch = addCounts(sc.Switch, ts)
		}
		out[name] = sc
	}
	for i, ts := range e.schemes.sw {
		add(int32(i), ts, false)
	}
	for i, ts := range e.schemes.host {
		add(e.hostSwitch(int32(i)), ts, true)
	}
	for _, lts := range e.schemes.links {
		for _, lt := range lts {
			l := &e.links[lt.link]
			if !l.atSwitch || l.swTo < 0 {
				continue
			}
			if out == nil {
				out = map[string]SchemeCounts{}
			}
			sc := out[l.from]
			sc.Ports = addPortCount(sc.Ports, l.fromPort, lt.tally)
			out[l.from] = sc
		}
	}
	return out
}

// addPortCount adds total t to port's counts, ports kept by name.
func addPortCount(ports []PortCounts, port string, t tally) []PortCounts {
	i, found := slices.BinarySearchFunc(ports, port, func(p PortCounts, name string) int { return cmp.Compare(p.Port, name) })
	if !found {
		ports = slices.Insert(ports, i, PortCounts{Port: port})
	}
	ports[i].Counts = addCounts(ports[i].Counts, []tally{t})
	return ports
}

// addCounts adds totals ts to counts, by name.
func addCounts(counts []lb.Count, ts []tally) []lb.Count {
	for _, t := range ts {
		i := 0
		for i < len(counts) && counts[i].Name != t.name {
			i++
		}
		if i == len(counts) {
			counts = append(counts, lb.Count{Name: t.name})
		}
		counts[i].Value += t.total
	}
	return counts
}

// hostSwitch is the switch a host's scheme counters are reported at: the
// one it attaches to, or the first its links lead to (-1: none).
func (e *PacketEngine) hostSwitch(id int32) int32 {
	if a := e.attach[id]; a >= 0 {
		return a
	}
	for _, li := range e.topo.out[e.hostName[id]] {
		if to := e.links[li].swTo; to >= 0 {
			return to
		}
	}
	return -1
}
