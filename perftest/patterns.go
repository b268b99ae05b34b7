package perftest

import "fmt"

// Endpoint is a host's RNIC as a pattern sees it.
type Endpoint struct {
	Host, Dev, IP string
	GIDIndex      int
}

// DefaultBasePort is perftest's default out-of-band port.
const DefaultBasePort = 18515

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
