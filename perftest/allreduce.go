package perftest

import "fmt"

// AllReduceParams: a ring all-reduce over Hosts.
type AllReduceParams struct {
	Hosts       []Endpoint
	BufferBytes int64
	MsgSize     int64
	QPs         int
	Tool        string
	BasePort    int
	Group       string
	// Steps runs only the first Steps steps (0: all 2(N-1)); 1 is every
	// host sending one chunk to its successor at once.
	Steps int
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
	ports, err := newPorts(p.BasePort)
	if err != nil {
		return nil, fmt.Errorf("all-reduce: %w", err)
	}
	steps := 2 * (n - 1)
	if p.Steps < 0 || p.Steps > steps {
		return nil, fmt.Errorf("all-reduce: %d steps asked of a ring of %d hosts, which has %d", p.Steps, n, steps)
	}
	if p.Steps > 0 {
		steps = p.Steps
	}
	flows := make([]Flow, 0, steps*n)
	id := func(step, i int) int { return step*n + i }
	for k := 0; k < steps; k++ {
		for i := 0; i < n; i++ {
			dst := (i + 1) % n
			f := flow(id(k, i), p.Hosts[i], p.Hosts[dst], p.Tool, chunk, p.MsgSize, p.QPs, ports.of(p.Hosts[dst].Host), p.Group, k)
			if k > 0 {
				prev := (i - 1 + n) % n
				f.After = []int{id(k-1, i), id(k-1, prev)}
			}
			flows = append(flows, f)
		}
	}
	return flows, nil
}
