package emulator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/schemes"
	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/emulator/netconfd"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest/agent"
)

// Options configure an emulated lab.
type Options struct {
	// Dir holds the lab's keys, known_hosts, device filesystems and the
	// lab file it exports. Required.
	Dir  string
	Seed int64
	// Engine is the fabric twin's engine: "packet" (default: every packet,
	// PAUSE frame, ACK and CNP simulated) or "flow" (max-min sharing, for
	// labs too large to simulate packet by packet); the packet engine's
	// switches forward with load-balancing module LB (default ecmp) and its
	// RNICs use Transport (gbn or irn). Engine and LB left empty take the
	// lab file's emulation: section (inventory.Emulation), whose host_lb
	// every host runs from the start.
	Engine    string
	LB        string
	LBParams  map[string]string
	Transport string
	// The packet engine's conventions (fabric.Config); zero values keep
	// its defaults. NackIntervalNs < 0 NACKs each expected PSN once;
	// ReorderQueues 0 offers as many reorder queues as schemes ask.
	NackIntervalNs int64
	CNPOnNack      *bool
	PauseQuanta    uint16
	PauseRefreshNs int64
	ReorderQueues  *int
	Logger         *slog.Logger
	// InboxDriverHosts are hosts emulated with the upstream mlx5 driver
	// (debugfs cc_params, no sysfs ecn tree); the others run MLNX_OFED.
	InboxDriverHosts []string
	// GNMIPlaintext serves gNMI without TLS (default: TLS with a CA the
	// lab generates, recorded as gnmi_tls.ca); GNMIAuth makes every gNMI
	// call carry the username and generated password the lab file names
	// (gnmisecurity.go).
	GNMIPlaintext, GNMIAuth bool
}

// Lab is a running emulated lab.
type Lab struct {
	inv       *inventory.Lab // as exported: endpoints, credential, known_hosts
	dir       string
	twin      *Twin
	listeners *listeners
	servers   []*sshd.Server
	targets   []*gnmitarget.Target
	netconf   map[string]*netconfd.Server
	lbs       map[string]lbChoice // packet engine: each switch's scheme (twinlb.go); under twin.mu
	schemes   *lb.Registry        // the load-balancing modules switch images name
	faults    faultSet
	gates     gates                   // endpoint faults by device/endpoint (endpointfault.go)
	bfshells  map[string]*Bfshell     // SDE shells (bfshell.go)
	sonic     map[string]*sonicSwitch // SONiC shells by switch (sonicshell.go); filled at start
	baselines struct {                // SDE tables at the defaults, by ports and program (Lab.baseline)
		mu sync.Mutex
		m  map[string]sdeBaseline
	}
	inbox map[string]bool  // hosts with the upstream mlx5 driver
	hosts map[string]*host // by name, filled at start
	// agentStore is the hosts' one agent store (agent.StoreDir on every
	// host): a version uploaded to one host is present on all, as on
	// hosts sharing an NFS home.
	agentStore string
	sums       sumCache    // SHA-256 of the hosts' files by version (sha256sum)
	writers    writerSlots // hosts writing their agent results at once (agent.go)
	gzips      gzipPool    // their compressors (agent.go)
	cancel     context.CancelFunc
	log        *slog.Logger
}

// ClientUser is the login name of the emulated lab's generated credential.
const ClientUser = "labctl"

// Start brings up every device of src on loopback and returns the running
// lab. src's management endpoints are ignored; Inventory reports the real ones.
func Start(ctx context.Context, src *inventory.Lab, opt Options) (_ *Lab, err error) {
	if opt.Dir == "" {
		return nil, errors.New("emulator: Options.Dir is required")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	for _, d := range []string{"keys", "devices"} {
		if err := os.MkdirAll(filepath.Join(opt.Dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("emulator: %w", err)
		}
	}
	em := src.Emulation // the lab file's twin, where the options leave it open
	if em == nil {
		em = &inventory.Emulation{}
	}
	opt.Engine = cmp.Or(opt.Engine, em.Engine)
	if opt.LB == "" {
		opt.LB, opt.LBParams = em.LB, em.LBParams
	}
	keyPath, clientPub, err := sshd.GenerateClientKey(filepath.Join(opt.Dir, "keys"))
	if err != nil {
		return nil, fmt.Errorf("emulator: client key: %w", err)
	}
	inv := cloneLab(src)
	inv.Emulated = true
	inv.KnownHosts = filepath.Join(opt.Dir, "known_hosts")
	inv.Credentials = map[string]inventory.Credential{"emulator": {User: ClientUser, KeyFile: keyPath}}
	gnmiSec, err := gnmiSecurity(opt, filepath.Join(opt.Dir, "keys"), inv)
	if err != nil {
		return nil, err
	}

	topo, err := fabric.NewTopology(inv)
	if err != nil {
		return nil, fmt.Errorf("emulator: lab %s: %w", inv.Name, err)
	}
	cfg := fabric.DefaultConfig()
	cfg.Seed = opt.Seed
	var engine fabric.Engine
	lbs := map[string]lbChoice{}
	reg, err := schemes.Registry()
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	kind, err := fabric.Engines().Get(cmp.Or(opt.Engine, fabric.EnginePacket))
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	if kind.Packets {
		cfg.LB, cfg.LBParams, cfg.Transport, cfg.Modules = opt.LB, opt.LBParams, opt.Transport, reg
		opt.knobs(&cfg)
		for _, sw := range inv.Switches {
			lbs[sw.Name] = lbChoice{scheme: schemeName(cfg.LB), params: maps.Clone(cfg.LBParams)}
		}
	}
	if engine, err = kind.New(topo, cfg); err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}

	runCtx, cancel := context.WithCancel(context.Background())
	l := &Lab{inv: inv, dir: opt.Dir, cancel: cancel, log: opt.Logger, listeners: &listeners{m: map[string]*pending{}},
		netconf: map[string]*netconfd.Server{}, lbs: lbs, schemes: reg, inbox: map[string]bool{}, hosts: map[string]*host{}}
	for _, h := range opt.InboxDriverHosts {
		l.inbox[h] = true
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()

	pubs := map[string]publisher{} // filled as the switches' gNMI targets start
	l.twin = newTwin(engine, pubs, opt.Logger)
	l.twin.nicPrio = l.nicPriority
	var known []sshd.KnownHost
	startSSH := func(name string, exec sshd.ExecHandler, root string, mounts map[string]string, subs map[string]sshd.SubsystemHandler, touch func(string)) (string, error) {
		hk, err := sshd.GenerateHostKey()
		if err != nil {
			return "", err
		}
		srv, err := sshd.New(sshd.Config{Name: name, Addr: "127.0.0.1:0", HostKey: hk,
			AuthorizedKeys: []ssh.PublicKey{clientPub}, Root: root, Mounts: mounts, Touch: touch, Exec: l.faults.wrap(name, exec), Subsystems: subs, Logger: opt.Logger,
			WrapListener: l.endpointGate(name, EndpointSSH).listen})
		if err != nil {
			return "", err
		}
		if err := srv.Start(runCtx); err != nil {
			return "", fmt.Errorf("device %s: ssh: %w", name, err)
		}
		l.servers = append(l.servers, srv)
		known = append(known, sshd.KnownHost{Addr: srv.Addr(), Key: hk.PublicKey()})
		return srv.Addr(), nil
	}
	swRoots := map[string]string{}
	for _, sw := range inv.Switches {
		swRoots[sw.Name] = filepath.Join(opt.Dir, "devices", sw.Name)
	}
	if err := bootFilesAll(swRoots); err != nil { // each switch's bf_switchd starts below (boot)
		return nil, err
	}
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		root := swRoots[sw.Name]
		sh := newShell(sw.Name)
		sd := l.addSwitchd(runCtx, sh, sw.Name, root) // image commands: coreutils, start-stop-daemon, bf_switchd
		// Every switch starts with the twin's default QoS, in its NETCONF
		// running config and in the tables of the bf_switchd it boots with.
		nc := netconfd.New(sw.Name, validateQoS)
		nc.OnCommit(func(running *netconfd.Tree) { l.applyQoS(sw.Name, running) })
		nc.FailCommitIf(func() bool { return l.faults.take(sw.Name, FaultCommit) })
		if err := nc.Boot(netconf.RenderQoS(defaultQoS(1))); err != nil {
			return nil, fmt.Errorf("device %s: %w", sw.Name, err)
		}
		l.netconf[sw.Name] = nc
		sd.sde = l.addBfshell(*sw, root, sh, sd.portsUp)
		if sw.OS == "sonic" || l.qosDriver(sw.Name) == qosdriver.SONiC {
			if err := l.addSONiC(sh, *sw, root); err != nil { // CONFIG_DB and its commands (sonicshell.go)
				return nil, err
			}
		}
		if err := sd.boot(); err != nil {
			return nil, err
		}
		subs := map[string]sshd.SubsystemHandler{"netconf": l.endpointGate(sw.Name, EndpointNETCONF).subsystem(nc.Serve)}
		if sw.Mgmt.SSH, err = startSSH(sw.Name, sh.exec, root, nil, subs, nil); err != nil {
			return nil, err
		}
		sw.Mgmt.NETCONF = sw.Mgmt.SSH // the "netconf" subsystem of the same server
		tgt, err := gnmitarget.New(sw.Name, opt.Logger)
		if err != nil {
			return nil, fmt.Errorf("device %s: gnmi: %w", sw.Name, err)
		}
		sec, err := gnmiSec(sw.Name)
		if err != nil {
			return nil, fmt.Errorf("device %s: gnmi: %w", sw.Name, err)
		}
		tgt.Secure(sec)
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("device %s: gnmi: %w", sw.Name, err)
		}
		gate := l.endpointGate(sw.Name, EndpointGNMI)
		lis = gate.listen(lis)
		tgt.WrapListener(gate.listen) // a restarted target stays behind the gate
		if l.qosDriver(sw.Name) == qosdriver.OpenConfig {
			if err := l.serveOpenConfig(tgt, *sw); err != nil { // gNMI Get/Set of openconfig-qos (openconfigqos.go)
				return nil, err
			}
		}
		go func() { _ = tgt.Serve(runCtx, lis) }()
		l.targets = append(l.targets, tgt)
		sw.Mgmt.GNMI = lis.Addr().String()
		sw.Credential = "emulator"
		pubs[sw.Name] = tgt
	}
	l.agentStore = filepath.Join(opt.Dir, "shared", "agent")
	if err := os.MkdirAll(l.agentStore, 0o700); err != nil {
		return nil, err
	}
	hostMounts := map[string]string{"/" + agent.StoreDir: l.agentStore}
	for i := range inv.Hosts {
		hh := &inv.Hosts[i]
		root := filepath.Join(opt.Dir, "devices", hh.Name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
		hh.Credential = "emulator"
		h := newHost(l, *hh, root)
		l.hosts[hh.Name] = h
		if hh.Mgmt.SSH, err = startSSH(hh.Name, h.sh.exec, root, hostMounts, nil, h.touch); err != nil {
			return nil, err
		}
		h.inv = *hh
	}
	if err := sshd.WriteKnownHosts(inv.KnownHosts, known); err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	if em.HostLB != "" {
		if err := l.SetHostLB(em.HostLB, em.HostLBParams); err != nil {
			return nil, err
		}
	}
	go l.twin.idle(runCtx)
	return l, nil
}

// Inventory is the running lab as an ordinary lab: real loopback endpoints,
// the generated key as credential, and the lab's own known_hosts.
func (l *Lab) Inventory() *inventory.Lab { return l.inv }

// Dir is the lab's state directory.
func (l *Lab) Dir() string { return l.dir }

// Close stops every endpoint, all at once: each SSH server waits for its
// connections' handlers, and a lab of a thousand hosts closed one server
// after another took seconds of waiting.
func (l *Lab) Close() error {
	l.cancel()
	errs := make([]error, len(l.servers)+len(l.targets))
	var wg sync.WaitGroup
	for i, s := range l.servers {
		wg.Go(func() { errs[i] = s.Close() })
	}
	for i, t := range l.targets {
		wg.Go(func() { errs[len(l.servers)+i] = t.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func cloneLab(src *inventory.Lab) *inventory.Lab {
	c := *src
	c.Switches = append([]inventory.Switch(nil), src.Switches...)
	c.Hosts = append([]inventory.Host(nil), src.Hosts...)
	c.Links = append([]inventory.Link(nil), src.Links...)
	return &c
}

// knobs sets the packet engine's conventions the options give.
func (opt Options) knobs(cfg *fabric.Config) {
	if opt.NackIntervalNs != 0 {
		cfg.NackIntervalNs = opt.NackIntervalNs
	}
	if opt.CNPOnNack != nil {
		cfg.CNPOnNack = *opt.CNPOnNack
	}
	if opt.PauseQuanta != 0 {
		cfg.PauseQuanta = opt.PauseQuanta
	}
	if opt.PauseRefreshNs != 0 {
		cfg.PauseRefreshNs = opt.PauseRefreshNs
	}
	if opt.ReorderQueues != nil {
		cfg.ReorderQueues = *opt.ReorderQueues // 0: no limit, as the engine reads it
	}
}
