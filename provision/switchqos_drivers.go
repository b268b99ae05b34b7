package provision

import (
	"context"
	"fmt"
	"time"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// Switch QoS drivers, as the inventory names them (Switch.QoSDriver).
const (
	DriverNETCONF = "netconf" // the default
	DriverSDE     = "sde"
)

// ConfirmTimeout is how long a NETCONF switch waits for the confirming
// commit before it restores its previous configuration by itself.
const ConfirmTimeout = 2 * time.Minute

// switchSession is one switch's QoS through its driver, for one plan or
// apply: read, stage a change that can still be undone, then confirm or
// cancel it.
type switchSession interface {
	// Read is the switch's QoS per port, with the ports in order; a
	// driver that configures the switch as a whole reports one port "".
	Read(ctx context.Context) (ports []string, have map[string]switchqos.Config, err error)
	// Want is want as this switch can hold it (after a Read).
	Want(want switchqos.Config) switchqos.Config
	// Stage makes the change. On error the switch is on its previous
	// configuration unless the error says otherwise; restored says labctl
	// had to write it back (drivers without a confirmed commit).
	Stage(ctx context.Context, want switchqos.Config) (restored bool, err error)
	// Confirm reads back and makes a staged change permanent.
	Confirm(ctx context.Context, want switchqos.Config) error
	// Cancel undoes a staged change.
	Cancel(ctx context.Context) error
	Close() error
}

// openSwitch opens the driver the inventory names for sw.
func openSwitch(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch) (switchSession, error) {
	cred, ok := lab.CredentialFor(sw.Name)
	if !ok {
		return nil, fmt.Errorf("switch %s has no credential in lab %s", sw.Name, lab.Name)
	}
	switch driverOf(sw) {
	case DriverSDE:
		if sw.Mgmt.SSH == "" {
			return nil, fmt.Errorf("switch %s (qos_driver sde) has no SSH endpoint", sw.Name)
		}
		var ports []string
		for _, p := range sw.Ports {
			ports = append(ports, p.Name)
		}
		t := sshdrv.Target{Name: sw.Name, Addr: sw.Mgmt.SSH, Cred: cred}
		return &sdeSession{s: tofino.NewSDEQoS(pool).Session(t, ports)}, nil
	default:
		if sw.Mgmt.NETCONF == "" {
			return nil, fmt.Errorf("switch %s has no NETCONF endpoint in lab %s", sw.Name, lab.Name)
		}
		t := sshdrv.Target{Name: sw.Name, Addr: sw.Mgmt.NETCONF, Cred: cred}
		s, err := netconf.Dial(ctx, pool, t, t.Addr)
		if err != nil {
			return nil, err
		}
		return &netconfSession{s: s}, nil
	}
}

func driverOf(sw *inventory.Switch) string {
	if sw.QoSDriver == DriverSDE {
		return DriverSDE
	}
	return DriverNETCONF
}

// netconfSession: candidate, validate, confirmed commit, confirm after
// read-back (drivers/netconf).
type netconfSession struct{ s *netconf.Session }

func (n *netconfSession) Read(context.Context) ([]string, map[string]switchqos.Config, error) {
	run, err := n.s.GetConfig("running")
	if err != nil {
		return nil, nil, err
	}
	q, err := netconf.ParseQoS(run)
	if err != nil {
		return nil, nil, err
	}
	return []string{""}, map[string]switchqos.Config{"": q}, nil
}

func (n *netconfSession) Want(w switchqos.Config) switchqos.Config { return w }

func (n *netconfSession) Stage(_ context.Context, w switchqos.Config) (bool, error) {
	return false, n.s.Stage(netconf.RenderQoS(w), ConfirmTimeout)
}

func (n *netconfSession) Confirm(_ context.Context, w switchqos.Config) error {
	return n.s.Confirm(func(running string) error {
		got, err := netconf.ParseQoS(running)
		if err != nil {
			return err
		}
		if d := switchqos.Diff(got, w); len(d) > 0 {
			return fmt.Errorf("%d settings read back differ, first %s = %s", len(d), d[0].Field, d[0].From)
		}
		return nil
	})
}

func (n *netconfSession) Cancel(context.Context) error { return n.s.Cancel() }
func (n *netconfSession) Close() error                 { return n.s.Close() }

// sdeSession: snapshot, write, read back, restore on failure
// (drivers/tofino).
type sdeSession struct {
	s    *tofino.SDESession
	cell int64
}

func (d *sdeSession) Read(ctx context.Context) ([]string, map[string]switchqos.Config, error) {
	have, cell, err := d.s.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	d.cell = cell
	return d.s.Ports(), have, nil
}

func (d *sdeSession) Want(w switchqos.Config) switchqos.Config { return w.Quantize(d.cell) }

func (d *sdeSession) Stage(ctx context.Context, w switchqos.Config) (bool, error) {
	return d.s.Stage(ctx, w)
}

// Confirm has nothing left to do: Stage has read back already.
func (d *sdeSession) Confirm(context.Context, switchqos.Config) error { return nil }
func (d *sdeSession) Cancel(ctx context.Context) error                { return d.s.Cancel(ctx) }
func (d *sdeSession) Close() error                                    { return nil }
