package perftest

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// BWReport is what a BW test session printed.
type BWReport struct {
	Title          string // e.g. "RDMA_Write BW Test"
	Device         string
	QPs            int
	ConnectionType string
	MTU            int
	LinkType       string
	GIDIndex       int
	Gbits          bool // the table is in Gb/sec (else MB/sec)
	Rows           []BWResult
	LocalQPNs      []uint64
	RemoteQPNs     []uint64
	LocalGIDs      []string
	RemoteGIDs     []string
}

// ErrorKind classifies a perftest failure.
type ErrorKind string

// Failure kinds a runner reacts to differently (retry a client whose server
// is not up yet; report a device or completion error).
const (
	ConnectFailed   ErrorKind = "connect_failed"
	ListenFailed    ErrorKind = "listen_failed"
	NoDevice        ErrorKind = "no_device"
	CompletionError ErrorKind = "completion_error"
	BadArgs         ErrorKind = "bad_args"
	Unknown         ErrorKind = "unknown"
)

// ToolError is a failure perftest reported in its output.
type ToolError struct {
	Kind ErrorKind
	Text string // the tool's own lines
	Line int    // 1-based line of Text in the output, 0 when not from one line
}

func (e *ToolError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("perftest %s: line %d: %s", e.Kind, e.Line, e.Text)
	}
	return fmt.Sprintf("perftest %s: %s", e.Kind, e.Text)
}

var errorSigns = []struct {
	sign string
	kind ErrorKind
}{
	{"Couldn't connect to", ConnectFailed},
	{"Couldn't listen to port", ListenFailed},
	{"Unable to find the Infiniband/RoCE device", NoDevice},
	{"Did not detect devices", NoDevice},
	{"Completion with error", CompletionError},
	{"Failed to complete run_iter", CompletionError},
	{"Parser function exited with Error", BadArgs},
	{"Invalid Command", BadArgs},
	{"Unable to init the socket connection", Unknown},
	{"Unable to Connect the HCA's through the link", Unknown},
}

// ClassifyError finds a known failure in a tool's combined output, or nil.
func ClassifyError(out string) *ToolError {
	for _, s := range errorSigns {
		if i := strings.Index(out, s.sign); i >= 0 {
			return &ToolError{Kind: s.kind, Text: strings.TrimSpace(lineAround(out, i))}
		}
	}
	return nil
}

func lineAround(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

// ParseBW parses the stdout of ib_write_bw/ib_read_bw/ib_send_bw. It accepts
// the v4.5-0.17 (6.06) layout and the later ones (extra columns of spaces,
// the Lock-free/DDP/Enhanced Reorder pairs, CQE Poll Batch, NUMA node).
func ParseBW(out string) (*BWReport, error) {
	r := &BWReport{}
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "*"):
			inTable = inTable && t == ""
			continue
		case strings.HasSuffix(t, "BW Test") && !strings.Contains(t, ":"):
			r.Title = t
			continue
		case strings.HasPrefix(t, "#bytes"):
			inTable = true
			r.Gbits = strings.Contains(t, "Gb/sec")
			continue
		case strings.HasPrefix(t, "local address:"), strings.HasPrefix(t, "remote address:"):
			qpn := fieldAfter(t, "QPN")
			v, _ := strconv.ParseUint(strings.TrimPrefix(qpn, "0x"), 16, 64)
			if strings.HasPrefix(t, "local") {
				r.LocalQPNs = append(r.LocalQPNs, v)
			} else {
				r.RemoteQPNs = append(r.RemoteQPNs, v)
			}
			continue
		case strings.HasPrefix(t, "GID:"):
			g := gidFromDecimal(strings.TrimSpace(strings.TrimPrefix(t, "GID:")))
			if len(r.LocalGIDs) < len(r.LocalQPNs) {
				r.LocalGIDs = append(r.LocalGIDs, g)
			} else {
				r.RemoteGIDs = append(r.RemoteGIDs, g)
			}
			continue
		}
		if inTable {
			row, ok := parseRow(t)
			if ok {
				r.Rows = append(r.Rows, row)
				continue
			}
		}
		// "Label : value" pairs, two on some lines; values are one token.
		// Tabs may have become spaces in pasted output, so split on labels.
		for rest := line; ; {
			k, after, ok := strings.Cut(rest, ":")
			if !ok {
				break
			}
			f := strings.Fields(after)
			if len(f) == 0 {
				break
			}
			v := f[0]
			rest = after[strings.Index(after, v)+len(v):]
			switch strings.TrimSpace(k) {
			case "Device":
				r.Device = v
			case "Number of qps":
				r.QPs, _ = strconv.Atoi(v)
			case "Connection type":
				r.ConnectionType = v
			case "Mtu":
				r.MTU, _ = strconv.Atoi(strings.TrimSuffix(v, "[B]"))
			case "Link type":
				r.LinkType = v
			case "GID index":
				r.GIDIndex, _ = strconv.Atoi(v)
			}
		}
	}
	// A table does not make a run good: with -a the sizes before a failing
	// one are printed, and stderr (unbuffered) can land before stdout's table.
	if e := failureLine(out); e != nil && len(r.Rows) > 0 {
		return nil, e
	}
	if len(r.Rows) == 0 {
		if e := ClassifyError(out); e != nil {
			return nil, e
		}
		return nil, &ToolError{Kind: Unknown, Text: "no result table in output"}
	}
	return r, nil
}

func parseRow(t string) (BWResult, bool) {
	f := strings.Fields(t)
	if len(f) != 5 {
		return BWResult{}, false
	}
	var r BWResult
	var err [5]error
	r.Bytes, err[0] = strconv.ParseInt(f[0], 10, 64)
	r.Iterations, err[1] = strconv.ParseInt(f[1], 10, 64)
	r.PeakGbps, err[2] = strconv.ParseFloat(f[2], 64)
	r.AvgGbps, err[3] = strconv.ParseFloat(f[3], 64)
	r.MsgRateMpps, err[4] = strconv.ParseFloat(f[4], 64)
	for _, e := range err {
		if e != nil {
			return BWResult{}, false
		}
	}
	return r, true
}

func fieldAfter(t, key string) string {
	f := strings.Fields(t)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}

// gidFromDecimal undoes perftest's %02d-per-byte GID printing.
func gidFromDecimal(s string) string {
	parts := strings.Split(s, ":")
	if len(parts) != 16 {
		return s
	}
	ip := make(net.IP, 16)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 255 {
			return s
		}
		ip[i] = byte(v)
	}
	return ip.String()
}
