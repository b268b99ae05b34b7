package scenarios

import (
	"fmt"
	"time"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// Point is one executable unit of a scenario: a traffic entry at one
// repetition, with its flows resolved to the lab's hosts.
type Point struct {
	Name        string          `json:"name"`
	Pattern     string          `json:"pattern"`
	Repetition  int             `json:"repetition"`
	Hosts       []string        `json:"hosts"`
	Flows       []perftest.Flow `json:"flows"`
	BufferBytes int64           `json:"buffer_bytes,omitempty"`
	LinkGbps    float64         `json:"link_gbps"`
	// workload: the requested load and the load the generated schedule
	// offers (they differ by the Poisson draw)
	RequestedLoad float64 `json:"requested_load,omitempty"`
	OfferedLoad   float64 `json:"offered_load,omitempty"`
}

// Plan is the expanded scenario: what the runner will do, written to plan.json.
type Plan struct {
	Scenario string  `json:"scenario"`
	Lab      string  `json:"lab"`
	Points   []Point `json:"points"`
}

const defaultMsgSize = 64 << 10

// MakePlan expands s over lab: repetitions x traffic entries.
func MakePlan(s *Scenario, lab *inventory.Lab) (*Plan, error) {
	reps := s.Repetitions
	if reps < 1 {
		reps = 1
	}
	p := &Plan{Scenario: s.Name, Lab: lab.Name}
	for r := 0; r < reps; r++ {
		for i, t := range s.Traffic {
			pt, err := planPoint(t, i, lab)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: traffic %q: %w", s.Name, t.PointName(i), err)
			}
			pt.Repetition = r
			if reps > 1 {
				pt.Name = fmt.Sprintf("%s/rep%d", pt.Name, r)
			}
			p.Points = append(p.Points, *pt)
		}
	}
	return p, nil
}

func planPoint(t Traffic, i int, lab *inventory.Lab) (*Point, error) {
	msg := int64(defaultMsgSize)
	if t.MsgSize != "" {
		msg, _ = ParseBytes(t.MsgSize) // validated at load
	}
	qps := t.QPs
	if qps < 1 {
		qps = 1
	}
	tool := t.Tool
	if tool == "" {
		tool = "ib_write_bw"
	}
	pt := &Point{Name: t.PointName(i), Pattern: t.Pattern}
	switch t.Pattern {
	case PatternIncast:
		recvName := t.Receiver
		if recvName == "" && len(lab.Hosts) > 0 {
			recvName = lab.Hosts[0].Name
		}
		recv, err := endpoint(lab, recvName)
		if err != nil {
			return nil, err
		}
		names := t.HostList
		if len(names) == 0 {
			names = otherHosts(lab, recvName, t.Senders)
		}
		if t.Senders > 0 && len(names) < t.Senders {
			return nil, fmt.Errorf("incast wants %d senders but lab %s has only %d other hosts", t.Senders, lab.Name, len(names))
		}
		var senders []perftest.Endpoint
		for _, n := range names {
			e, err := endpoint(lab, n)
			if err != nil {
				return nil, err
			}
			senders = append(senders, e)
		}
		bytes, _ := ParseBytes(t.Bytes)
		flows, err := perftest.Incast(perftest.IncastParams{
			Senders: senders, Receiver: recv, Bytes: bytes, MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name,
		})
		if err != nil {
			return nil, err
		}
		pt.Flows, pt.Hosts = flows, append(append([]string(nil), names...), recvName) // never into the caller's host_list
		pt.LinkGbps = rnicGbps(lab, recvName)
	case PatternAllReduce:
		names := t.HostList
		if len(names) == 0 {
			if len(lab.Hosts) < t.Hosts {
				return nil, fmt.Errorf("all-reduce wants %d hosts but lab %s has %d", t.Hosts, lab.Name, len(lab.Hosts))
			}
			names = ringHosts(lab, t.Hosts)
		}
		var eps []perftest.Endpoint
		for _, n := range names {
			e, err := endpoint(lab, n)
			if err != nil {
				return nil, err
			}
			eps = append(eps, e)
		}
		buf, _ := ParseBytes(t.Buffer)
		flows, err := perftest.RingAllReduce(perftest.AllReduceParams{
			Hosts: eps, BufferBytes: buf, MsgSize: msg, QPs: qps, Tool: tool, Group: pt.Name,
		})
		if err != nil {
			return nil, err
		}
		pt.Flows, pt.Hosts, pt.BufferBytes = flows, names, buf
		pt.LinkGbps = rnicGbps(lab, names[0])
	case PatternWorkload:
		if err := planWorkload(pt, t, lab, msg, tool); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown pattern %q", t.Pattern)
	}
	return pt, nil
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

func planWorkload(pt *Point, t Traffic, lab *inventory.Lab, msg int64, tool string) error {
	names := t.HostList
	if len(names) == 0 {
		for _, h := range lab.Hosts {
			if t.Hosts == 0 || len(names) < t.Hosts {
				names = append(names, h.Name)
			}
		}
	}
	var eps []perftest.Endpoint
	for _, n := range names {
		e, err := endpoint(lab, n)
		if err != nil {
			return err
		}
		eps = append(eps, e)
	}
	cdf, err := perftest.CDFByName(t.CDF)
	if err != nil {
		return err
	}
	dur, _ := time.ParseDuration(t.Duration) // validated at load
	gbps := rnicGbps(lab, names[0])
	flows, err := perftest.Poisson(perftest.PoissonParams{Hosts: eps, CDF: cdf, Load: t.Load, LinkGbps: gbps,
		Duration: dur, Seed: t.Seed, MsgSize: msg, Tool: tool, Group: pt.Name})
	if err != nil {
		return err
	}
	var bytes float64
	for _, f := range flows {
		bytes += float64(f.Bytes)
	}
	pt.Flows, pt.Hosts, pt.LinkGbps = flows, names, gbps
	pt.RequestedLoad = t.Load
	pt.OfferedLoad = bytes * 8 / (float64(len(names)) * gbps * float64(dur.Nanoseconds()))
	return nil
}
