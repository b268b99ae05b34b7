package perftest

import (
	"fmt"
	"strconv"
	"strings"
)

// Role is the side of a perftest pair.
type Role int

// Roles.
const (
	Server Role = iota // no host argument: waits for a client
	Client             // connects to the server's address
)

// Invocation is a parsed perftest command line.
type Invocation struct {
	Tool     string
	Device   string
	IBPort   int
	GIDIndex int
	QPs      int
	Size     int64
	Iters    int64
	Duration int // seconds; 0 = iteration mode
	Gbits    bool
	Port     int
	Server   string // host argument; "" for the server role
	RDMACM   bool
	TOS      int // -1 unset
	TClass   int // -1 unset
}

// Tools labctl drives.
var tools = map[string]string{"ib_write_bw": "RDMA_Write", "ib_read_bw": "RDMA_Read", "ib_send_bw": "Send"}

// Args builds the argv of one side of a flow.
func Args(f Flow, role Role) []string {
	dev := f.DstDev
	if role == Client {
		dev = f.SrcDev
	}
	a := []string{f.Tool, "-d", dev, "-i", "1", "-x", strconv.Itoa(f.GIDIdx),
		"-q", strconv.Itoa(max(f.QPs, 1)), "-s", strconv.FormatInt(f.MsgSize, 10),
		"-n", strconv.FormatInt(f.Iterations(), 10), "--report_gbits", "-F", "-p", strconv.Itoa(f.Port)}
	if f.TClass > 0 {
		a = append(a, "--tclass="+strconv.Itoa(f.TClass))
	}
	if role == Client {
		a = append(a, f.DstAddr)
	}
	return a
}

// ParseArgs parses a perftest command line with the tool's own limits and
// messages (the emulator answers bad input as the real tool does).
func ParseArgs(argv []string) (Invocation, error) {
	inv := Invocation{IBPort: 1, QPs: 1, Size: 65536, Iters: 5000, Port: 18515, TOS: -1, TClass: -1}
	if len(argv) == 0 {
		return inv, fmt.Errorf(" Invalid Command or flag.")
	}
	inv.Tool = argv[0]
	if i := strings.LastIndexByte(inv.Tool, '/'); i >= 0 {
		inv.Tool = inv.Tool[i+1:]
	}
	if _, ok := tools[inv.Tool]; !ok {
		return inv, fmt.Errorf("%s: not a supported perftest tool", inv.Tool)
	}
	var hosts []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		name, val, hasVal := strings.Cut(a, "=")
		next := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(argv) {
				return "", fmt.Errorf("%s: option requires an argument -- '%s'", inv.Tool, strings.TrimLeft(name, "-"))
			}
			i++
			return argv[i], nil
		}
		num := func(lo, hi int64, msg string) (int64, error) {
			s, err := next()
			if err != nil {
				return 0, err
			}
			n, err := parseSize(s)
			if err != nil || n < lo || n > hi {
				return 0, fmt.Errorf("%s", msg)
			}
			return n, nil
		}
		var err error
		var n int64
		switch name {
		case "-d", "--ib-dev":
			inv.Device, err = next()
		case "-i", "--ib-port":
			n, err = num(1, 255, " Invalid ib port")
			inv.IBPort = int(n)
		case "-x", "--gid-index":
			n, err = num(0, 64, " Gid index should be between 0 and 64")
			inv.GIDIndex = int(n)
		case "-q", "--qp":
			n, err = num(1, 16384, " num of Qps should be between 1 and 16384")
			inv.QPs = int(n)
		case "-s", "--size":
			inv.Size, err = num(1, 2147483647, " Message Size should be between 1 and 2147483647")
		case "-n", "--iters":
			inv.Iters, err = num(5, 100000000, " Iteration num should be between 5 and 100000000")
		case "-D", "--duration":
			n, err = num(1, 1<<31-1, " Duration should be a positive number")
			inv.Duration = int(n)
		case "-p", "--port":
			n, err = num(1, 65535, " Invalid port number")
			inv.Port = int(n)
		case "-T", "--tos":
			n, err = num(0, 255, " TOS should be between 0 and 255")
			inv.TOS = int(n)
		case "--tclass":
			s, e := next()
			if e != nil {
				err = e
				break
			}
			v, e := strconv.ParseUint(s, 10, 16)
			if e != nil {
				err = fmt.Errorf(" traffic class argument %s should be uint16_t", s)
			}
			inv.TClass = int(v)
		case "-m", "--mtu", "-t", "--tx-depth", "-Q", "--cq-mod", "-c", "--connection":
			_, err = next()
		case "--report_gbits":
			inv.Gbits = true
		case "-R", "--rdma_cm":
			inv.RDMACM = true
		case "-F", "--CPU-freq", "-N", "--noPeak", "--perform_warm_up":
		default:
			if strings.HasPrefix(a, "-") {
				return inv, fmt.Errorf("%s: unrecognized option '%s'\n Invalid Command or flag.\n Please check command line and run again.", inv.Tool, a)
			}
			hosts = append(hosts, a)
		}
		if err != nil {
			return inv, err
		}
	}
	if len(hosts) > 1 {
		return inv, fmt.Errorf(" Invalid Command line. Please check command rerun ")
	}
	if len(hosts) == 1 {
		inv.Server = hosts[0]
	}
	if inv.TOS >= 0 && !inv.RDMACM {
		return inv, fmt.Errorf(" TOS only valid for rdma_cm based QP and RawEth QP ")
	}
	return inv, nil
}

// parseSize reads a number with perftest's K/M suffixes.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}
