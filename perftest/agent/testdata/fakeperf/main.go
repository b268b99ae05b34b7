// Command fakeperf stands in for ib_write_bw in the agent's tests: a real
// process with perftest's process model (no host argument: a server that
// listens on -p, stops listening once one client is in and serves it; otherwise a client that fails like
// the real tool when nobody listens) printing perftest's real output
// through the perftest package's formatter. It moves no data: it sleeps in
// proportion to the bytes.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/labctl/labctl/perftest"
)

func main() {
	inv, err := perftest.ParseArgs(os.Args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, " Parser function exited with Error")
		os.Exit(1)
	}
	sess := perftest.Session{Tool: inv.Tool, Device: inv.Device, QPs: inv.QPs, MTU: 4096, GIDIndex: inv.GIDIndex, TxDepth: 128, Gbits: inv.Gbits,
		Local: []perftest.QPInfo{{QPN: 0x108, PSN: 0x9d3e5c, GID: net.ParseIP("127.0.0.1")}}, Remote: []perftest.QPInfo{{QPN: 0x109, PSN: 0x1d2f7a, GID: net.ParseIP("127.0.0.1")}}}
	addr := fmt.Sprintf("127.0.0.1:%d", inv.Port)
	if inv.Server == "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Couldn't listen to port %d\n Unable to init the socket connection\n", inv.Port)
			os.Exit(1)
		}
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		l.Close() // perftest serves one client: it stops listening once one is in
		var secs float64
		fmt.Fscan(bufio.NewReader(c), &secs)
		sess.Role, sess.Result = perftest.Server, perftest.NewResult(inv.Size, inv.Iters*int64(inv.QPs), secs, inv.Gbits)
		perftest.FormatBW(os.Stdout, sess)
		return
	}
	c, err := net.Dial("tcp", fmt.Sprintf("%s:%d", inv.Server, inv.Port))
	if err != nil {
		perftest.FormatConnectError(os.Stderr, inv.Server, inv.Port)
		os.Exit(1)
	}
	total := inv.Size * inv.Iters * int64(inv.QPs)
	d := time.Duration(float64(total)/1e9*float64(time.Second)) + 5*time.Millisecond // "1 GB/s"
	time.Sleep(d)
	fmt.Fprintf(c, "%f\n", d.Seconds())
	c.Close()
	sess.Role, sess.Result = perftest.Client, perftest.NewResult(inv.Size, inv.Iters*int64(inv.QPs), d.Seconds(), inv.Gbits)
	perftest.FormatBW(os.Stdout, sess)
}
