package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/reports"
)

// Point is one executable unit of a scenario: a traffic entry of one
// variant at one repetition, with its flows resolved to the lab's hosts.
type Point struct {
	Name       string `json:"name"`
	Pattern    string `json:"pattern"`
	Lab        string `json:"lab"`
	Variant    int    `json:"variant"` // index in the matrix's cross product
	Traffic    int    `json:"traffic"` // index of the traffic entry
	Repetition int    `json:"repetition"`
	// Params are the swept values that apply to the point's traffic entry
	// by name, the well-known keys (reports.ParamScheme, ParamLoad,
	// ParamWorkload) where the point has them, paramTraffic when the
	// scenario has several entries, "seed" for a random pattern and
	// "repetition" when repeated.
	Params map[string]any `json:"params,omitempty"`
	Hosts  []string       `json:"hosts"`
	// Flows are the point's flows until it has run; plan.json leaves them
	// out (the point's schedule, raw/<point>/schedule.json, has them) and
	// says how many there are and where the schedule is.
	Flows       []perftest.Flow `json:"-"`
	FlowCount   int             `json:"flow_count"`
	Schedule    string          `json:"schedule,omitempty"`
	BufferBytes int64           `json:"buffer_bytes,omitempty"`
	LinkGbps    float64         `json:"link_gbps"`
	// workload: the arrival window, the requested load and the load the
	// generated flows offer over it (within perftest.DefaultLoadTolerance)
	WindowNs      int64   `json:"window_ns,omitempty"`
	RequestedLoad float64 `json:"requested_load,omitempty"`
	OfferedLoad   float64 `json:"offered_load,omitempty"`
}

// Plan is the expanded scenario: what the runner will do, written to
// plan.json (without the flows: see Point.Flows).
type Plan struct {
	Scenario string  `json:"scenario"`
	Lab      string  `json:"lab"`
	Points   []Point `json:"points"`
	// ArchiveEstimateBytes is about what the points on emulated labs write
	// into the archive, estimated when they were planned (a variant that
	// would not fit is refused then).
	ArchiveEstimateBytes int64 `json:"archive_estimate_bytes,omitempty"`
}

const defaultMsgSize = 64 << 10

// paramTraffic is the key of PointMeta.Params that names a point's
// traffic entry when a scenario has several: points of different entries
// never fall into one report group (reports group on Params).
const paramTraffic = "traffic"

// MakePlan expands s over lab: for every variant of its matrix (one
// without), repetitions x traffic entries. Every variant is planned on
// lab; the runner plans variant by variant on the lab each one names.
func MakePlan(s *Scenario, lab *inventory.Lab) (*Plan, error) {
	vs, err := s.Variants()
	if err != nil {
		return nil, err
	}
	p := &Plan{Scenario: s.Name, Lab: lab.Name}
	for i, v := range vs {
		pts, err := planVariant(v, i, lab)
		if err != nil {
			return nil, err
		}
		p.Points = append(p.Points, pts...)
	}
	return p, nil
}

// planVariant plans one variant: for each repetition, each traffic entry.
func planVariant(v Variant, index int, lab *inventory.Lab) ([]Point, error) {
	s := v.Scenario
	racks := rackMap(lab)
	out := variantPoints(v, index, lab.Name)
	for k := range out {
		pt := &out[k]
		t := s.Traffic[pt.Traffic]
		pc := &planCtx{s: s, lab: lab, racks: racks, name: pt.Name, seed: seedFor(t, pt.Traffic, pt.Repetition)}
		p, ok := patternByName(t.Pattern)
		if !ok {
			return nil, fmt.Errorf("point %s: unknown pattern %q", pt.Name, t.Pattern)
		}
		if err := p.plan(pc, t, pt); err != nil {
			return nil, fmt.Errorf("point %s: %w", pt.Name, err)
		}
		pt.FlowCount, pt.Schedule = len(pt.Flows), archive.ScheduleRel(pt.Name)
	}
	return out, nil
}

// variantPoints are a variant's points, repetitions times its entries,
// with what names them (name, lab, indexes, parameters) and no traffic.
func variantPoints(v Variant, index int, lab string) []Point {
	reps := max(v.Scenario.Repetitions, 1)
	var out []Point
	for r := 0; r < reps; r++ {
		for _, e := range v.Entries {
			t := v.Scenario.Traffic[e.Index]
			out = append(out, Point{Name: pointName(e, t, r, reps), Pattern: t.Pattern, Lab: lab, Variant: index,
				Traffic: e.Index, Repetition: r, Params: pointParams(v, e, seedFor(t, e.Index, r), r, reps)})
		}
	}
	return out
}

// pointName is the traffic entry's name, then the label of the sweeps
// that apply to it, then the repetition: "ws/scheme=ecmp/load=0.3/rep1".
func pointName(e Entry, t Traffic, rep, reps int) string {
	name := t.PointName(e.Index)
	if e.Label != "" {
		name += "/" + e.Label
	}
	if reps > 1 {
		name += fmt.Sprintf("/rep%d", rep)
	}
	return name
}

// seedFor is a traffic entry's seed: the one it pins, else 1 + 1000 x
// repetition + its index. Unpinned seeds are the same in every variant,
// so schemes, loads or profiles compared in a matrix see the same draws.
func seedFor(t Traffic, i, rep int) int64 {
	if t.Seed != nil {
		return *t.Seed
	}
	return int64(1 + 1000*rep + i)
}

// randomPattern says whether a pattern draws from a seed.
func randomPattern(p string) bool { return p == PatternWorkload || p == PatternPermutation }

func pointParams(v Variant, e Entry, seed int64, rep, reps int) map[string]any {
	t := v.Scenario.Traffic[e.Index]
	m := make(map[string]any, len(e.Params)+6)
	for k, x := range e.Params {
		m[k] = x
	}
	if len(v.Scenario.Traffic) > 1 {
		m[paramTraffic] = t.PointName(e.Index)
	}
	setDefault := func(k string, x any) {
		if _, ok := m[k]; !ok {
			m[k] = x
		}
	}
	if lb := v.Scenario.Emulation.LB; lb != "" {
		setDefault(reports.ParamScheme, lb)
	}
	if t.Pattern == PatternWorkload {
		setDefault(reports.ParamLoad, t.Load)
	}
	if t.CDF != "" {
		setDefault(reports.ParamWorkload, labelValue(t.CDF))
	}
	if randomPattern(t.Pattern) {
		m[reports.ParamSeed] = seed
	}
	if reps > 1 {
		m[reports.ParamRepetition] = rep
	}
	return m
}

// planCtx is what planning one point needs besides its traffic entry.
type planCtx struct {
	s     *Scenario
	lab   *inventory.Lab
	racks map[string]string // host -> rack
	name  string
	seed  int64
}

// common are the perftest settings every pattern shares, with defaults.
func common(t Traffic) (msg int64, qps int, tool string) {
	msg = int64(defaultMsgSize)
	if t.MsgSize != "" {
		msg, _ = ParseBytes(t.MsgSize) // validated at load
	}
	qps, tool = max(t.QPs, 1), t.Tool
	if tool == "" {
		tool = "ib_write_bw"
	}
	return msg, qps, tool
}

// endpoints resolves host names to their first RNIC.
func (pc *planCtx) endpoints(names []string) ([]perftest.Endpoint, error) {
	eps := make([]perftest.Endpoint, 0, len(names))
	for _, n := range names {
		e, err := endpoint(pc.lab, n)
		if err != nil {
			return nil, err
		}
		eps = append(eps, e)
	}
	return eps, nil
}

// hosts is host_list, or the lab's first n hosts (all when n is 0), by
// name and as endpoints.
func (pc *planCtx) hosts(t Traffic, n int) ([]string, []perftest.Endpoint, error) {
	var names []string
	switch {
	case len(t.HostList) > 0:
		names = append(names, t.HostList...) // never into the caller's host_list
	case n > len(pc.lab.Hosts):
		return nil, nil, fmt.Errorf("%s wants %d hosts but lab %s has %d", t.Pattern, n, pc.lab.Name, len(pc.lab.Hosts))
	default:
		for _, h := range pc.lab.Hosts {
			if n == 0 || len(names) < n {
				names = append(names, h.Name)
			}
		}
	}
	eps, err := pc.endpoints(names)
	return names, eps, err
}

func planIncast(pc *planCtx, t Traffic, pt *Point) error {
	msg, qps, tool := common(t)
	lab := pc.lab
	recvName := t.Receiver
	if recvName == "" && len(lab.Hosts) > 0 {
		recvName = lab.Hosts[0].Name
	}
	recv, err := endpoint(lab, recvName)
	if err != nil {
		return err
	}
	names := append([]string(nil), t.HostList...)
	switch {
	case len(names) > 0:
	case t.Spread == SpreadLeaves:
		names = slices.DeleteFunc(ringHosts(lab, len(lab.Hosts)), func(h string) bool { return h == recvName })
		names = names[:min(len(names), t.Senders)]
	default:
		names = otherHosts(lab, recvName, t.Senders)
	}
	if t.Senders > 0 && len(names) < t.Senders {
		return fmt.Errorf("incast wants %d senders but lab %s has only %d other hosts", t.Senders, lab.Name, len(names))
	}
	senders, err := pc.endpoints(names)
	if err != nil {
		return err
	}
	bytes, _ := ParseBytes(t.Bytes)
	flows, err := perftest.Incast(perftest.IncastParams{
		Senders: senders, Receiver: recv, Bytes: bytes, MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name,
	})
	if err != nil {
		return err
	}
	pt.Flows, pt.Hosts = flows, append(names, recvName)
	pt.LinkGbps = rnicGbps(lab, recvName)
	return nil
}

func planAllReduce(pc *planCtx, t Traffic, pt *Point) error {
	msg, qps, tool := common(t)
	names := append([]string(nil), t.HostList...)
	if len(names) == 0 {
		if len(pc.lab.Hosts) < t.Hosts {
			return fmt.Errorf("all-reduce wants %d hosts but lab %s has %d", t.Hosts, pc.lab.Name, len(pc.lab.Hosts))
		}
		names = ringHosts(pc.lab, t.Hosts)
	}
	eps, err := pc.endpoints(names)
	if err != nil {
		return err
	}
	buf, _ := ParseBytes(t.Buffer)
	flows, err := perftest.RingAllReduce(perftest.AllReduceParams{
		Hosts: eps, BufferBytes: buf, MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name, Steps: t.Steps,
	})
	if err != nil {
		return err
	}
	if t.Steps > 0 && t.Steps < 2*(len(names)-1) {
		buf = 0 // not a whole all-reduce: no bus bandwidth
	}
	pt.Flows, pt.Hosts, pt.BufferBytes = flows, names, buf
	pt.LinkGbps = rnicGbps(pc.lab, names[0])
	return nil
}

func endpoint(lab *inventory.Lab, name string) (perftest.Endpoint, error) {
	h, ok := lab.Host(name)
	if !ok {
		return perftest.Endpoint{}, fmt.Errorf("host %q is not in lab %s", name, lab.Name)
	}
	if len(h.RNICs) == 0 {
		return perftest.Endpoint{}, fmt.Errorf("host %s has no RNIC in lab %s", name, lab.Name)
	}
	r := h.RNICs[0]
	return perftest.Endpoint{Host: h.Name, Dev: r.Device, IP: r.IP, GIDIndex: r.GIDIndex}, nil
}

func otherHosts(lab *inventory.Lab, except string, n int) []string {
	var out []string
	for _, h := range lab.Hosts {
		if h.Name != except && len(out) < n {
			out = append(out, h.Name)
		}
	}
	return out
}

// ringHosts picks n hosts spread over the leaves (round robin), so that ring
// neighbours sit in different racks as in the papers' all-reduce setups.
func ringHosts(lab *inventory.Lab, n int) []string {
	byLeaf := map[string][]string{}
	var leaves []string
	for _, h := range lab.Hosts {
		leaf := leafOf(lab, h.Name)
		if _, ok := byLeaf[leaf]; !ok {
			leaves = append(leaves, leaf)
		}
		byLeaf[leaf] = append(byLeaf[leaf], h.Name)
	}
	var out []string
	for round := 0; len(out) < n; round++ {
		added := false
		for _, l := range leaves {
			if round < len(byLeaf[l]) && len(out) < n {
				out = append(out, byLeaf[l][round])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

func leafOf(lab *inventory.Lab, host string) string {
	for _, l := range lab.Links {
		if l.A.Device == host {
			return l.B.Device
		}
		if l.B.Device == host {
			return l.A.Device
		}
	}
	return ""
}

func rnicGbps(lab *inventory.Lab, host string) float64 {
	if h, ok := lab.Host(host); ok && len(h.RNICs) > 0 {
		return h.RNICs[0].SpeedGbps
	}
	return 0
}

func planWorkload(pc *planCtx, t Traffic, pt *Point) error {
	msg, _, tool := common(t)
	names, eps, err := pc.hosts(t, t.Hosts)
	if err != nil {
		return err
	}
	cdf, err := pc.s.cdf(t.CDF)
	if err != nil {
		return err
	}
	dur, _ := time.ParseDuration(t.Duration) // validated at load
	gbps := rnicGbps(pc.lab, names[0])
	load := hostLoad(t, pc.lab)
	flows, err := perftest.Poisson(perftest.PoissonParams{Hosts: eps, CDF: cdf, Load: load, LinkGbps: gbps,
		Duration: dur, Seed: pc.seed, Pairing: t.Pairing, Racks: pc.racks, IntraRack: t.IntraRack, Tolerance: perftest.DefaultLoadTolerance,
		MsgSize: msg, Tool: tool, Group: pt.Name})
	if err != nil {
		return err
	}
	pt.Flows, pt.Hosts, pt.LinkGbps = flows, names, gbps
	pt.WindowNs, pt.RequestedLoad = dur.Nanoseconds(), load
	pt.OfferedLoad = perftest.OfferedLoad(flows, len(names), gbps, dur)
	return nil
}

func planPermutation(pc *planCtx, t Traffic, pt *Point) error {
	msg, qps, tool := common(t)
	names, eps, err := pc.hosts(t, t.Hosts)
	if err != nil {
		return err
	}
	p := perftest.PermutationParams{Hosts: eps, Seed: pc.seed, MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name}
	if t.CDF != "" {
		if p.CDF, err = pc.s.cdf(t.CDF); err != nil {
			return err
		}
	} else {
		p.Bytes, _ = ParseBytes(t.Bytes)
	}
	flows, err := perftest.Permutation(p)
	if err != nil {
		return err
	}
	pt.Flows, pt.Hosts, pt.LinkGbps = flows, names, rnicGbps(pc.lab, names[0])
	return nil
}

func planBurst(pc *planCtx, t Traffic, pt *Point) error {
	msg, qps, tool := common(t)
	names, eps, err := pc.hosts(t, 0)
	if err != nil {
		return err
	}
	p := perftest.BurstParams{Hosts: eps, Racks: pc.racks, Receiver: t.Receiver, Background: t.Background,
		Senders: t.Senders, Bursts: t.Bursts, Start: perftest.DefaultBurstStart,
		MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name}
	p.BurstBytes, _ = ParseBytes(t.Bytes)                // "" -> 0: the default
	p.BackgroundBytes, _ = ParseBytes(t.BackgroundBytes) // likewise
	p.Interval, _ = time.ParseDuration(t.Interval)
	if t.Start != "" {
		p.Start, _ = time.ParseDuration(t.Start)
	}
	p.LinkGbps = rnicGbps(pc.lab, names[0])
	flows, err := perftest.Burst(p)
	if err != nil {
		return err
	}
	pt.Flows, pt.Hosts, pt.LinkGbps = flows, usedHosts(flows), p.LinkGbps
	return nil
}

// usedHosts are the hosts flows send from or to, in first-use order: the
// hosts that must run an agent.
func usedHosts(flows []perftest.Flow) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range flows {
		for _, h := range []string{f.Src, f.Dst} {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// rackMap maps every host to its rack: the switch its first link goes to.
func rackMap(lab *inventory.Lab) map[string]string {
	m := make(map[string]string, len(lab.Hosts))
	for _, h := range lab.Hosts {
		if leaf := leafOf(lab, h.Name); leaf != "" {
			m[h.Name] = leaf
		}
	}
	return m
}

// Load bases of a workload's load (Traffic.LoadBasis).
const (
	LoadBasisHost    = "host"
	LoadBasisNetwork = "network"
)

// hostLoad is the fraction of its link each host offers for a workload
// entry: its load, or, stated against the network's capacity, the load
// divided by the lab's oversubscription (a 2:1 leaf-spine at network load
// 0.8 has its hosts offer 0.4, as the papers' simulators generate it).
func hostLoad(t Traffic, lab *inventory.Lab) float64 {
	if t.LoadBasis == LoadBasisNetwork {
		return t.Load / lab.Oversubscription()
	}
	return t.Load
}
