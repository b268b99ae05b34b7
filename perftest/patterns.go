package perftest

import "fmt"

// Endpoint is a host's RNIC as a pattern sees it.
type Endpoint struct {
	Host, Dev, IP string
	GIDIndex      int
}

// DefaultBasePort is perftest's default out-of-band port.
const DefaultBasePort = 18515

// ports hands out each receiving host's out-of-band ports in turn, from
// base (0: DefaultBasePort). Ports stay within base..65535: a host that
// receives more flows than that wraps around to base, and its agent then
// runs the flows that share a port one after the other (by the time a port
// comes round again, tens of thousands of flows later, its earlier flow is
// long done). base must be a non-privileged port, 1024..65535.
type ports struct {
	base int
	next map[string]int
}

func newPorts(base int) (*ports, error) {
	if base == 0 {
		base = DefaultBasePort
	}
	if base < 1024 || base > 65535 {
		return nil, fmt.Errorf("base port %d is not in 1024..65535", base)
	}
	return &ports{base: base, next: map[string]int{}}, nil
}

// of is the next port of host dst.
func (p *ports) of(dst string) int {
	k := p.next[dst]
	p.next[dst]++
	return p.base + k%(65536-p.base)
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
