package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
	"github.com/labctl/labctl/perftest/agent"
)

// host is one emulated server: its inventory entry, filesystem root and the
// lab-wide state its commands share (twin, perftest listeners).
type host struct {
	inv  inventory.Host
	root string
	lab  *Lab
	sh   *shell
	mu   sync.Mutex              // guards the RNIC settings below
	qos  map[string]connectx.QoS // per netdev
	tos  map[string]int          // per device: RDMA-CM default ToS
	mode map[string]int          // per device: RDMA-CM default RoCE mode
	// sys writes the host's /sys tree (sysfs.go) the first time anything
	// looks under /sys: see usePath.
	sys func()
}

func newHost(lab *Lab, inv inventory.Host, root string) *host {
	h := &host{inv: inv, root: root, lab: lab, sh: newShell(inv.Name), qos: map[string]connectx.QoS{},
		tos: map[string]int{}, mode: map[string]int{}}
	for _, r := range inv.RNICs {
		h.qos[r.Netdev] = connectx.DefaultQoS()
		h.mode[r.Device] = 2
	}
	h.sys = sync.OnceFunc(func() { h.writeSys(inv.RNICs, lab.inbox[inv.Name]) })
	h.sh.cmds["cat"] = h.cat
	h.sh.cmds["test"] = h.test
	h.sh.cmds["readlink"] = h.readlink
	h.sh.redirect = h.echoTo
	for _, tool := range []string{"ib_write_bw", "ib_read_bw", "ib_send_bw"} {
		h.sh.cmds[tool] = h.perftest
	}
	h.sh.cmds["ibv_devinfo"] = h.ibvDevinfo
	h.sh.cmds["show_gids"] = h.showGIDs
	h.sh.cmds["ethtool"] = h.ethtool
	h.sh.cmds["mlnx_qos"] = h.mlnxQoS
	h.sh.cmds["cma_roce_tos"] = h.cmaRoCE
	h.sh.cmds["cma_roce_mode"] = h.cmaRoCE
	h.sh.cmds["sha256sum"] = h.sha256sum
	h.sh.cmds["mkdir"] = h.mkdir
	h.sh.cmds[agent.BinaryName] = h.agent
	return h
}

// mkdir [-p] [-m MODE] DIR...: as mkdir(1); the mode applies to DIR
// itself, parents get 0755.
func (h *host) mkdir(_ context.Context, argv []string, s *sshd.Session) int {
	parents, mode := false, os.FileMode(0o755)
	args := argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-p":
			parents = true
		case "-m":
			if len(args) < 2 {
				fmt.Fprintln(s.Stderr, "mkdir: option requires an argument -- 'm'")
				return 1
			}
			m, err := strconv.ParseUint(args[1], 8, 32)
			if err != nil {
				fmt.Fprintf(s.Stderr, "mkdir: invalid mode %s\n", args[1])
				return 1
			}
			mode, args = os.FileMode(m), args[1:]
		default:
			fmt.Fprintf(s.Stderr, "mkdir: only -p and -m are emulated, not %s\n", args[0])
			return 1
		}
		args = args[1:]
	}
	code := 0
	for _, d := range args {
		p := h.path(d)
		if parents {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				fmt.Fprintf(s.Stderr, "mkdir: cannot create directory '%s': %v\n", d, err)
				code = 1
				continue
			}
		}
		err := os.Mkdir(p, mode)
		if err == nil {
			err = os.Chmod(p, mode) // whatever the umask
		} else if fi, serr := os.Stat(p); parents && serr == nil && fi.IsDir() {
			err = nil
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "mkdir: cannot create directory '%s': %v\n", d, err)
			code = 1
		}
	}
	return code
}

// path maps a remote path (relative ones from the home directory, the
// root) into the host's root, or into the lab's one agent store, which
// every host's SFTP serves at the same place. The host's /sys tree is
// written first if p may show it (usePath).
func (h *host) path(p string) string {
	clean := path.Clean("/" + p)
	h.usePath(clean)
	return h.rawPath(clean)
}

// usePath writes the host's /sys tree (its RNICs' ECN or debugfs
// defaults and PCI links: some fifty files per host) before the first
// command or SFTP request whose path (clean, absolute) might tell whether
// it is there (sysShows). Nothing can see the tree before then, so a lab
// of a thousand hosts starts without writing files most runs never read
// (a run reads hw_counters, which the twin serves). sys is nil for a
// host made without newHost.
func (h *host) usePath(clean string) {
	if h.sys != nil && sysShows(clean) {
		h.sys()
	}
}

// sysShows says whether what a command or SFTP request finds at p
// (clean, absolute) can depend on a host's /sys tree, which lies under
// /sys/class/net and /sys/kernel/debug: p is the root (its listing shows
// sys), in the tree, above it (/sys/class), or beside a directory that
// exists only with it (creating /sys/foo fails without /sys). Elsewhere,
// e.g. /tmp or /sys/class/infiniband/mlx5_0/ports/1/hw_counters/x,
// nothing does.
func sysShows(p string) bool {
	if p == "/" {
		return true
	}
	dir := path.Dir(p)
	for _, root := range []string{"/sys/class/net", "/sys/kernel/debug"} {
		in := p == root || strings.HasPrefix(p, root+"/")
		above := strings.HasPrefix(root, p+"/")
		beside := dir != "/" && (dir == root || strings.HasPrefix(root, dir+"/"))
		if in || above || beside {
			return true
		}
	}
	return false
}

// rawPath is path without writing the /sys tree (which uses it).
func (h *host) rawPath(clean string) string {
	if h.lab != nil && h.lab.agentStore != "" {
		store := "/" + agent.StoreDir
		if clean == store {
			return h.lab.agentStore
		}
		if rest, ok := strings.CutPrefix(clean, store+"/"); ok {
			return filepath.Join(h.lab.agentStore, filepath.FromSlash(rest))
		}
	}
	return filepath.Join(h.root, filepath.FromSlash(clean))
}

func (h *host) rnic(devOrNetdev string) (inventory.RNIC, bool) {
	for _, r := range h.inv.RNICs {
		if devOrNetdev == "" || r.Device == devOrNetdev || r.Netdev == devOrNetdev {
			return r, true
		}
	}
	return inventory.RNIC{}, false
}

// listeners are the perftest servers waiting for a client, lab-wide, keyed
// by "ip:port" like the real out-of-band TCP socket.
type listeners struct {
	mu sync.Mutex
	m  map[string]*pending
}

type pending struct {
	host    string
	inv     perftest.Invocation
	connect chan *clientConn // the client hands over its session here
}

type clientConn struct {
	inv    perftest.Invocation
	src    string
	result chan perftest.BWResult // closed on failure
	local  []perftest.QPInfo
}

var adhocSeq atomic.Int64

// perftest emulates ib_*_bw as server (no host argument) or client.
func (h *host) perftest(ctx context.Context, argv []string, s *sshd.Session) int {
	inv, err := perftest.ParseArgs(argv)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		fmt.Fprintln(s.Stderr, " Parser function exited with Error")
		return 1
	}
	r, ok := h.rnic(inv.Device)
	if !ok {
		fmt.Fprintf(s.Stderr, "IB device %s not found\n Unable to find the Infiniband/RoCE device\n", inv.Device)
		return 1
	}
	if inv.Server == "" {
		return h.perftestServer(ctx, inv, r, s)
	}
	return h.perftestClient(ctx, inv, r, s)
}

func (h *host) perftestServer(ctx context.Context, inv perftest.Invocation, r inventory.RNIC, s *sshd.Session) int {
	key := net.JoinHostPort(r.IP, fmt.Sprint(inv.Port))
	p := &pending{host: h.inv.Name, inv: inv, connect: make(chan *clientConn)}
	l := h.lab.listeners
	l.mu.Lock()
	if _, busy := l.m[key]; busy {
		l.mu.Unlock()
		fmt.Fprintf(s.Stderr, "Couldn't listen to port %d\n Unable to init the socket connection\n", inv.Port)
		return 1
	}
	l.m[key] = p
	l.mu.Unlock()
	defer func() { l.mu.Lock(); delete(l.m, key); l.mu.Unlock() }()

	fmt.Fprint(s.Stdout, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
	select {
	case <-ctx.Done():
		return 1
	case c := <-p.connect:
		res, ok := <-c.result
		if !ok {
			return 1
		}
		sess := h.session(inv, r, perftest.Server, res)
		sess.Local, sess.Remote = qpInfos(h.inv.Name, r, inv), c.local
		_ = perftest.FormatBW(s.Stdout, sess)
		return 0
	}
}

func (h *host) perftestClient(ctx context.Context, inv perftest.Invocation, r inventory.RNIC, s *sshd.Session) int {
	key := net.JoinHostPort(inv.Server, fmt.Sprint(inv.Port))
	l := h.lab.listeners
	l.mu.Lock()
	p, ok := l.m[key]
	l.mu.Unlock()
	if !ok {
		perftest.FormatConnectError(s.Stderr, inv.Server, inv.Port)
		return 1
	}
	c := &clientConn{inv: inv, src: h.inv.Name, result: make(chan perftest.BWResult, 1), local: qpInfos(h.inv.Name, r, inv)}
	select {
	case p.connect <- c:
	case <-ctx.Done():
		return 1
	}
	qps := max(inv.QPs, 1)
	f := perftest.Flow{ID: 0, Src: h.inv.Name, Dst: p.host, Bytes: inv.Size * inv.Iters * int64(qps),
		MsgSize: inv.Size, QPs: qps, Tool: inv.Tool, SrcDev: r.Device, TClass: h.trafficClass(inv, r.Device)}
	sched := &perftest.Schedule{ID: fmt.Sprintf("adhoc-%d", adhocSeq.Add(1)), Epoch: time.Now(), Flows: []perftest.Flow{f}}
	_, res, err := h.lab.twin.RunSchedule(ctx, sched)
	if err != nil || res[0].Err != "" {
		close(c.result)
		fmt.Fprintf(s.Stderr, " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n")
		return 1
	}
	fr := res[0]
	bw := perftest.NewResult(inv.Size, inv.Iters*int64(qps), float64(fr.End-fr.Start)/1e9, inv.Gbits)
	c.result <- bw
	sess := h.session(inv, r, perftest.Client, bw)
	sess.Local, sess.Remote = c.local, qpInfos(p.host, mustRNIC(h.lab, p.host), p.inv)
	_ = perftest.FormatBW(s.Stdout, sess)
	return 0
}

func (h *host) session(inv perftest.Invocation, r inventory.RNIC, role perftest.Role, res perftest.BWResult) perftest.Session {
	return perftest.Session{Tool: inv.Tool, Role: role, Device: r.Device, QPs: max(inv.QPs, 1), MTU: 4096,
		GIDIndex: r.GIDIndex, TxDepth: 128, Result: res, Gbits: inv.Gbits}
}

func mustRNIC(lab *Lab, hostName string) inventory.RNIC {
	if hh, ok := lab.inv.Host(hostName); ok && len(hh.RNICs) > 0 {
		return hh.RNICs[0]
	}
	return inventory.RNIC{}
}

// qpInfos makes stable, realistic-looking QP numbers for a host's side.
func qpInfos(hostName string, r inventory.RNIC, inv perftest.Invocation) []perftest.QPInfo {
	out := make([]perftest.QPInfo, max(inv.QPs, 1))
	gid := net.ParseIP(r.IP)
	var key [64]byte
	for i := range out {
		// FNV-1a of "host/port/qp", appended rather than printed: every
		// emulated flow's output needs both sides' QPs.
		k := append(key[:0], hostName...)
		k = append(strconv.AppendInt(append(k, '/'), int64(inv.Port), 10), '/')
		v := uint32(2166136261) // FNV-1a's offset basis and prime
		for _, c := range strconv.AppendInt(k, int64(i), 10) {
			v = (v ^ uint32(c)) * 16777619
		}
		out[i] = perftest.QPInfo{QPN: 0x100 + uint64(v%0x3f00), PSN: uint64(v>>8) & 0xffffff,
			RKey: 0x1f0000 + uint64(v%0xffff), VAddr: 0x7f0000000000 + uint64(v)<<12, GID: gid}
	}
	return out
}

func (h *host) sha256sum(_ context.Context, argv []string, s *sshd.Session) int {
	var sums *sumCache // a switch's files (no lab) are hashed every time
	if h.lab != nil {
		sums = &h.lab.sums
	}
	status := 0
	for _, p := range argv[1:] {
		sum, err := sums.of(h.path(p))
		switch {
		case os.IsNotExist(err):
			fmt.Fprintf(s.Stderr, "sha256sum: %s: No such file or directory\n", p)
			status = 1
		case err != nil:
			fmt.Fprintf(s.Stderr, "sha256sum: %s: Input/output error\n", p)
			status = 1
		default:
			fmt.Fprintf(s.Stdout, "%s  %s\n", sum, p)
		}
	}
	return status
}

// sumCache remembers files' SHA-256 by version (path, size, modification
// time, inode): the emulated hosts share one agent store, and hashing the
// same 4 MB agent for each of 1,024 hosts cost seconds of the one machine's
// CPU that real hosts spend in parallel on their own. A file changed in
// place gets a new modification time and is hashed again.
type sumCache struct{ m sync.Map } // fileVersion -> hex SHA-256

type fileVersion struct {
	path        string
	size, mtime int64
	ino         uint64
}

// of is file's SHA-256 (hex); a nil cache hashes every time.
func (c *sumCache) of(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	v := fileVersion{path: file, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.ino = st.Ino
	}
	if c != nil {
		if sum, ok := c.m.Load(v); ok {
			return sum.(string), nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if c != nil {
		c.m.Store(v, sum)
	}
	return sum, nil
}

func (h *host) ibvDevinfo(_ context.Context, _ []string, s *sshd.Session) int {
	var devs []connectx.DevInfo
	for i, r := range h.inv.RNICs {
		guid := guidFor(h.inv.Name, i)
		devs = append(devs, connectx.DevInfo{
			HCAID: r.Device, Transport: "InfiniBand (0)", FWVer: "16.35.2000", NodeGUID: guid, SysImageGUID: guid,
			VendorID: "0x02c9", VendorPartID: 4119, HWVer: "0x0", BoardID: "MT_0000000008",
			Ports: []connectx.DevPort{{Num: 1, State: "PORT_ACTIVE (4)", MaxMTU: 4096, ActiveMTU: 4096, PortLMC: "0x00", LinkLayer: "Ethernet"}},
		})
	}
	if err := connectx.FormatDevInfo(s.Stdout, devs); err != nil {
		return 1
	}
	return 0
}

func guidFor(name string, i int) string {
	hs := fnv.New64a()
	fmt.Fprintf(hs, "%s/%d", name, i)
	v := hs.Sum64()
	return fmt.Sprintf("%04x:%04x:%04x:%04x", 0x0c42, uint16(v>>32), uint16(v>>16), uint16(v))
}

func (h *host) showGIDs(_ context.Context, _ []string, s *sshd.Session) int {
	var gids []connectx.GID
	for i, r := range h.inv.RNICs {
		mac := net.HardwareAddr{0x0c, 0x42, 0xa1, byte(len(h.inv.Name)), byte(i), fnvByte(h.inv.Name)}
		gids = append(gids, connectx.StandardGIDs(r.Device, r.Netdev, mac, net.ParseIP(r.IP))...)
	}
	if err := connectx.FormatShowGIDs(s.Stdout, gids); err != nil {
		return 1
	}
	return 0
}

func fnvByte(s string) byte {
	hs := fnv.New32a()
	hs.Write([]byte(s))
	return byte(hs.Sum32())
}

func (h *host) ethtool(_ context.Context, argv []string, s *sshd.Session) int {
	if len(argv) != 3 || argv[1] != "-S" {
		fmt.Fprintln(s.Stderr, "ethtool: only -S <devname> is emulated")
		return 1
	}
	r, ok := h.rnic(argv[2])
	if !ok || r.Netdev != argv[2] {
		fmt.Fprintf(s.Stderr, "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n")
		return 1
	}
	pc, transport := h.lab.twin.HostCounters(h.inv.Name, r.Device) // the flow engine leaves rx_prioN_marked 0
	if err := connectx.FormatEthtoolStats(s.Stdout, connectx.MLX5Stats(rnicCounters(pc, transport))); err != nil {
		return 1
	}
	return 0
}

func (h *host) mlnxQoS(_ context.Context, argv []string, s *sshd.Session) int {
	netdev, trust, pfc, prio2buf, bufSize := "", "", "", "", ""
	var dscp2prio []string
	for i := 1; i < len(argv); i++ {
		val := func() string {
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch argv[i] {
		case "-i", "--interface":
			netdev = val()
		case "--trust":
			trust = val()
		case "-f", "--pfc":
			pfc = val()
		case "--dscp2prio":
			dscp2prio = append(dscp2prio, val())
		case "--prio2buffer":
			prio2buf = val()
		case "--buffer_size":
			bufSize = val()
		default:
			// Other settings (ETS, rate limits, DCBX mode) are not emulated:
			// refuse rather than pretend to apply them.
			fmt.Fprintf(s.Stderr, "mlnx_qos: option %s is not emulated\n", argv[i])
			return 1
		}
	}
	if netdev == "" {
		fmt.Fprintln(s.Stdout, "Interface name is required")
		return 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q, ok := h.qos[netdev]
	if !ok {
		fmt.Fprintf(s.Stderr, "Netlink error: no such device %s\n", netdev)
		return 1
	}
	if trust != "" {
		if err := connectx.ValidTrust(trust); err != nil {
			fmt.Fprintln(s.Stdout, err)
			return 1
		}
		q.Trust = trust
	}
	if pfc != "" {
		on, err := connectx.ParsePFCList(pfc)
		if err != nil {
			fmt.Fprintln(s.Stdout, err)
			return 1
		}
		q.PFCEnabled = on
	}
	// mlx-tools refuses --dscp2prio with --trust; its exact message is not
	// in the public reference (UNCERTAIN).
	if len(dscp2prio) > 0 && trust != "" {
		fmt.Fprintln(s.Stdout, "--dscp2prio cannot be combined with --trust")
		return 1
	}
	for _, d := range dscp2prio {
		op, dscp, prio, err := connectx.ParseDSCP2Prio(d)
		if err != nil {
			fmt.Fprintln(s.Stdout, err)
			return 1
		}
		switch op {
		case "set":
			q.DSCP2Prio[dscp] = prio
		case "del": // back to the firmware default
			q.DSCP2Prio[dscp] = dscp >> 3
		case "flush":
			q.DSCP2Prio = connectx.DefaultQoS().DSCP2Prio
		}
	}
	if prio2buf != "" {
		v, err := connectx.ParseIntList("prio2buffer", prio2buf, 7)
		if err != nil {
			fmt.Fprintln(s.Stdout, err)
			return 1
		}
		q.PrioBuffer = v
	}
	if bufSize != "" {
		v, err := connectx.ParseIntList("buffer_size", bufSize, q.MaxBufferSize)
		total := 0
		for _, b := range v {
			total += b
		}
		if err == nil && total > q.MaxBufferSize {
			// The real tool refuses a total above max_buffer_size; its text is
			// not in the public reference (UNCERTAIN), like ParseIntList's.
			err = fmt.Errorf("Buffer sizes add up to %d, above max_buffer_size %d", total, q.MaxBufferSize)
		}
		if err != nil {
			fmt.Fprintln(s.Stdout, err)
			return 1
		}
		q.RxBufferSizes = v
	}
	h.qos[netdev] = q
	// Every invocation ends by printing the current state, as the tool does.
	if err := connectx.FormatMlnxQoS(s.Stdout, q); err != nil {
		return 1
	}
	return 0
}

// cmaRoCE emulates mlnx-tools' cma_roce_tos and cma_roce_mode: options
// -d DEV (default mlx5_0), -p PORT (default 1), -t TOS or -m MODE; each
// prints the configfs value after the change.
func (h *host) cmaRoCE(_ context.Context, argv []string, s *sshd.Session) int {
	dev, set := "mlx5_0", ""
	tool := argv[0][strings.LastIndexByte(argv[0], '/')+1:]
	for i := 1; i+1 < len(argv); i += 2 {
		switch argv[i] {
		case "-d":
			dev = argv[i+1]
		case "-p":
			if argv[i+1] != "1" {
				fmt.Fprintf(s.Stdout, "Device %s port %s does not exist\n", dev, argv[i+1])
				return 1
			}
		case "-t", "-m":
			set = argv[i+1]
		}
	}
	if _, ok := h.rnic(dev); !ok || dev == "" {
		fmt.Fprintf(s.Stdout, "Failed to create configuration for %s\n", dev)
		return 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if set != "" {
		v, err := strconv.Atoi(set)
		switch {
		case err != nil, tool == "cma_roce_tos" && (v < 0 || v > 255), tool == "cma_roce_mode" && v != 1 && v != 2:
			fmt.Fprintf(s.Stdout, "Invalid value %s\n", set)
			return 1
		case tool == "cma_roce_tos":
			h.tos[dev] = v
		default:
			h.mode[dev] = v
		}
	}
	if tool == "cma_roce_tos" {
		fmt.Fprintln(s.Stdout, h.tos[dev])
	} else {
		fmt.Fprintln(s.Stdout, connectx.RoCEModeText(h.mode[dev]))
	}
	return 0
}

// rnicCounters maps the twin's view of a host port to mlx5 counters; pause
// durations are reported in us. The packet engine counts received traffic
// per priority (control packets on its priority 7); the flow engine
// carries everything on priority 3.
func rnicCounters(pc fabric.PortCounters, perPrio bool) connectx.RNICCounters {
	c := connectx.RNICCounters{RxBytes: pc.RxBytes, TxBytes: pc.TxBytes, RxPkts: pc.RxPkts, TxPkts: pc.TxPkts, TxDiscards: pc.Drops}
	for p := 0; p < 8; p++ {
		c.PauseRx[p], c.PauseTx[p] = pc.PFCRx[p], pc.PFCTx[p]
		c.PauseRxDurationUs[p], c.PauseTxDurationUs[p] = pc.PauseRxNs[p]/1000, pc.PauseTxNs[p]/1000
		c.ECNMarked[p] = pc.ECNReceived[p] // rx_prioN_marked: CE-marked packets received
		c.PrioTxBytes[p], c.PrioTxPkts[p] = pc.Queues[p].TxBytes, pc.Queues[p].TxPkts
	}
	c.PrioRxBytes, c.PrioRxPkts = pc.RxPrioBytes, pc.RxPrioPkts
	if !perPrio {
		c.PrioRxBytes[3], c.PrioRxPkts[3] = pc.RxBytes, pc.RxPkts
	}
	return c
}

// nicPriority is the priority a host's RNIC dev sends a traffic class on:
// with trust dscp the class's DSCP through the dscp2prio map; with trust
// pcp the QP's own priority (service level 0: labctl's perftest sets
// none), as the frames are untagged.
func (l *Lab) nicPriority(host, dev string, tclass int) int {
	h, ok := l.hosts[host]
	if !ok {
		return 3
	}
	r, ok := h.rnic(dev)
	if !ok {
		return 3
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.qos[r.Netdev]
	if q.Trust != "dscp" {
		return 0
	}
	return q.DSCP2Prio[tclass>>2&63]
}

// trafficClass is the ToS byte a perftest client's QPs send with: -T (or
// else the device's cma_roce_tos) for RDMA-CM QPs, --tclass for others, 0
// when neither is set.
func (h *host) trafficClass(inv perftest.Invocation, dev string) int {
	if !inv.RDMACM {
		return max(inv.TClass, 0)
	}
	if inv.TOS >= 0 {
		return inv.TOS
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tos[dev]
}

// touch is usePath for an SFTP request's path, relative to the root
// (sshd.Config.Touch).
func (h *host) touch(name string) { h.usePath(path.Clean("/" + name)) }
