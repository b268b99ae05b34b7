package perftest

import (
	"errors"
	"fmt"
)

// Endpoint is a host's RNIC as a pattern sees it.
type Endpoint struct {
	Host, Dev, IP string
	GIDIndex      int
}

// DefaultBasePort is perftest's default out-of-band port.
const DefaultBasePort = 18515

// IncastParams: N senders to one receiver, all at once.
type IncastParams struct {
	Senders  []Endpoint
	Receiver Endpoint
	Bytes    int64 // per sender
	MsgSize  int64
	QPs      int
	Tool     string
	BasePort int
	Group    string
}

// Incast builds one flow per sender, all at offset 0, each on its own port
// of the receiver.
func Incast(p IncastParams) ([]Flow, error) {
	if len(p.Senders) == 0 {
		return nil, errors.New("incast: no senders")
	}
	if err := checkCommon(p.Tool, p.Bytes, p.MsgSize); err != nil {
		return nil, fmt.Errorf("incast: %w", err)
	}
	base := p.BasePort
	if base == 0 {
		base = DefaultBasePort
	}
	flows := make([]Flow, 0, len(p.Senders))
	for i, s := range p.Senders {
		if s.Host == p.Receiver.Host {
			return nil, fmt.Errorf("incast: sender %s is also the receiver", s.Host)
		}
		flows = append(flows, flow(i, s, p.Receiver, p.Tool, p.Bytes, p.MsgSize, p.QPs, base+i, p.Group, 0))
	}
	return flows, nil
}

// AllReduceParams: a ring all-reduce over Hosts.
type AllReduceParams struct {
	Hosts       []Endpoint
	BufferBytes int64
	MsgSize     int64
	QPs         int
	Tool        string
	BasePort    int
	Group       string
}

// RingAllReduce builds the 2(N-1) steps of a ring all-reduce
// (reduce-scatter then all-gather): in every step each host sends
// BufferBytes/N to its ring successor.
//
// The step-k flow from host i waits for the step-(k-1) flow host i sent and
// the one it received: the data dependency of a real ring. An agent sees
// only flows it sends or receives, so this is also the most a real lab can
// enforce without a global barrier; in a symmetric fabric the steps still
// advance together.
func RingAllReduce(p AllReduceParams) ([]Flow, error) {
	n := len(p.Hosts)
	if n < 2 {
		return nil, fmt.Errorf("all-reduce: a ring needs at least 2 hosts, got %d", n)
	}
	if err := checkCommon(p.Tool, p.BufferBytes, p.MsgSize); err != nil {
		return nil, fmt.Errorf("all-reduce: %w", err)
	}
	seen := map[string]bool{}
	for _, h := range p.Hosts {
		if seen[h.Host] {
			return nil, fmt.Errorf("all-reduce: host %s appears twice in the ring", h.Host)
		}
		seen[h.Host] = true
	}
	chunk := (p.BufferBytes + int64(n) - 1) / int64(n)
	qps := int64(max(p.QPs, 1))
	// whole messages per QP, and at least perftest's 5 iterations
	iters := max((chunk+p.MsgSize*qps-1)/(p.MsgSize*qps), 5)
	chunk = iters * p.MsgSize * qps
	base := p.BasePort
	if base == 0 {
		base = DefaultBasePort
	}
	steps := 2 * (n - 1)
	flows := make([]Flow, 0, steps*n)
	id := func(step, i int) int { return step*n + i }
	for k := 0; k < steps; k++ {
		for i := 0; i < n; i++ {
			dst := (i + 1) % n
			// ports: distinct per receiving host across all steps
			f := flow(id(k, i), p.Hosts[i], p.Hosts[dst], p.Tool, chunk, p.MsgSize, p.QPs, base+k, p.Group, k)
			if k > 0 {
				prev := (i - 1 + n) % n
				f.After = []int{id(k-1, i), id(k-1, prev)}
			}
			flows = append(flows, f)
		}
	}
	return flows, nil
}

func flow(id int, src, dst Endpoint, tool string, bytes, msg int64, qps, port int, group string, step int) Flow {
	return Flow{ID: id, Src: src.Host, Dst: dst.Host, SrcDev: src.Dev, DstDev: dst.Dev, DstAddr: dst.IP,
		GIDIdx: src.GIDIndex, Tool: tool, Bytes: bytes, MsgSize: msg, QPs: max(qps, 1), Port: port, Group: group, Step: step}
}

func checkCommon(tool string, bytes, msg int64) error {
	if _, ok := tools[tool]; !ok {
		return fmt.Errorf("unknown tool %q (ib_write_bw, ib_read_bw, ib_send_bw)", tool)
	}
	if bytes <= 0 || msg <= 0 {
		return fmt.Errorf("sizes must be > 0 (bytes %d, message %d)", bytes, msg)
	}
	return nil
}
