package provision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/drivers/netconf"
	"github.com/labctl/labctl/drivers/openconfig"
	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/sonic"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/inventory"
)

// Switch QoS drivers, as the inventory names them (Switch.QoSDriver);
// drivers/qosdriver is their registry and picks one by os/model.
const (
	DriverNETCONF    = qosdriver.NETCONF // the default
	DriverSDE        = qosdriver.SDE
	DriverSONiC      = qosdriver.SONiC
	DriverOpenConfig = qosdriver.OpenConfig
)

// StepTimeout bounds one step on one switch: reading it, staging a
// change, reading it back, confirming or undoing the change.
const StepTimeout = 2 * time.Minute

// ConfirmTimeout is how long a NETCONF switch keeps a staged change
// waiting for its confirming commit before it restores its previous
// configuration by itself. An apply works in waves of parallel switches:
// a switch staged in the first wave waits for the other waves to stage,
// then for every switch to be read back, then for the confirms, each step
// bounded by StepTimeout. The timeout covers all of it, so no change
// expires before labctl can confirm it. (A switch also restores the
// previous configuration when labctl's session ends.)
func ConfirmTimeout(switches, parallel int) time.Duration {
	waves := (switches + parallel - 1) / max(parallel, 1)
	return time.Duration(3*max(waves, 1)) * StepTimeout
}

// switchSession is one switch's QoS through its driver, for one plan or
// apply: read, stage a change that can still be undone, read it back,
// then confirm or cancel it.
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
	// Check reads the switch back: nil if it holds want.
	Check(ctx context.Context, want switchqos.Config) error
	// Confirm makes a staged change permanent.
	Confirm(ctx context.Context) error
	// Cancel undoes a staged change.
	Cancel(ctx context.Context) error
	Close() error
}

// opener opens one driver's session on switch sw.
// token names a NETCONF apply's persistent confirmed commit (see
// netconfSession); other drivers ignore it.
type opener func(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, confirm time.Duration, token string) (switchSession, error)

// openers are the sessions of the drivers drivers/qosdriver registers,
// by name (TestEveryDriverOpens: one for each).
func openers() map[string]opener {
	return map[string]opener{
		DriverNETCONF:    openNETCONF,
		DriverSDE:        openSDE,
		DriverSONiC:      openSONiC,
		DriverOpenConfig: openOpenConfig,
	}
}

// openSwitch opens the driver the inventory picks for sw (qos_driver, or
// its os or model, through the registry); a NETCONF switch keeps a staged
// change for confirm before it restores the old one, and stages it as a
// persistent confirmed commit named token (see netconfSession).
func openSwitch(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, confirm time.Duration, token string) (switchSession, error) {
	name, err := lab.SwitchQoSDriver(sw, qosdriver.Builtin())
	if err != nil {
		return nil, err
	}
	open, ok := openers()[name]
	if !ok {
		return nil, fmt.Errorf("device %s: qos driver %s is registered but provision cannot open it", sw.Name, name)
	}
	return open(ctx, pool, lab, sw, confirm, token)
}

func openSDE(_ context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, _ time.Duration, _ string) (switchSession, error) {
	t, err := sshdrv.DeviceTarget(lab, sw.Name, sshdrv.EndpointSSH)
	if err != nil {
		return nil, fmt.Errorf("%w (qos_driver sde)", err)
	}
	return &sdeSession{s: tofino.NewSDEQoS(pool).Session(t, sw.PortNames()), device: sw.Name}, nil
}

// openSONiC: checkpoint, apply-patch, read back with sonic-cfggen, then
// save or roll back (drivers/sonic, whose session is a switchSession).
func openSONiC(_ context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, _ time.Duration, _ string) (switchSession, error) {
	t, err := sshdrv.DeviceTarget(lab, sw.Name, sshdrv.EndpointSSH)
	if err != nil {
		return nil, fmt.Errorf("%w (qos_driver sonic)", err)
	}
	return sonic.New(pool).Session(t, sw.PortNames()), nil
}

// openOpenConfig: gNMI Get, one Set, read back; a Set of the old leaves
// to cancel (drivers/openconfig), with the deviations of the switch's os.
func openOpenConfig(_ context.Context, _ *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, _ time.Duration, _ string) (switchSession, error) {
	if sw.Mgmt.GNMI == "" {
		return nil, fmt.Errorf("device %s: qos_driver openconfig needs mgmt.gnmi", sw.Name)
	}
	sec, err := collectors.SwitchSecurity(lab, sw) // the lab's gnmi_tls, the switch's over it: TLS unless it says plaintext
	if err != nil {
		return nil, err
	}
	dial, err := sec.DialOptions(sw.Name, slog.Default())
	if err != nil {
		return nil, err
	}
	return openconfig.Dial(sw.Name, sw.Mgmt.GNMI, sw.OS, sw.PortNames(), dial...)
}

func openNETCONF(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, sw *inventory.Switch, confirm time.Duration, token string) (switchSession, error) {
	t, err := sshdrv.DeviceTarget(lab, sw.Name, sshdrv.EndpointNETCONF)
	if err != nil {
		return nil, err
	}
	s, err := netconf.Dial(ctx, pool, t)
	if err != nil {
		return nil, err
	}
	return &netconfSession{pool: pool, t: t, s: s, device: sw.Name, confirm: confirm, token: token}, nil
}

// driverOf names sw's driver for plans and results; a switch the
// registry refuses keeps what its qos_driver says (openSwitch reports it).
func driverOf(sw *inventory.Switch) string {
	name, err := qosdriver.Builtin().Pick(sw.QoSDriver, sw.OS, sw.Model)
	if err != nil {
		return sw.QoSDriver
	}
	return name
}

// readBackError says how a switch differs from what it should hold.
func readBackError(device string, d []switchqos.Setting) error {
	if len(d) == 0 {
		return nil
	}
	return fmt.Errorf("device %s: read-back: %d settings differ, first %s = %s (want %s)", device, len(d), d[0].Field, d[0].From, d[0].To)
}

// sdeSession: snapshot, write, read back, restore on failure
// (drivers/tofino).
type sdeSession struct {
	s      *tofino.SDESession
	device string
	cell   int64
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

// Stage runs to its end even when ctx is cancelled (bounded by ctx's
// deadline, else StepTimeout): the SDE shell has no transaction, so a
// stage cut short could leave tables half written, and its own restore
// of the snapshot must be able to run.
func (d *sdeSession) Stage(ctx context.Context, w switchqos.Config) (bool, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(StepTimeout)
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	return d.s.Stage(ctx, w)
}

// Check reads back, again over a new connection if the SSH connection
// dropped (the pool redials): a read has no effect to repeat.
func (d *sdeSession) Check(ctx context.Context, w switchqos.Config) error {
	var ports []string
	var have map[string]switchqos.Config
	err := sdeRetry(ctx, func(ctx context.Context) (err error) {
		ports, have, err = d.Read(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return readBackError(d.device, switchqos.MergePorts(ports, have, w))
}

// Confirm has nothing to do: a staged SDE change is in place already.
func (d *sdeSession) Confirm(context.Context) error { return nil }

// Cancel writes the snapshot back and reads it back, again if the SSH
// connection dropped: writing the snapshot is idempotent (only the entries
// that differ from it are written).
func (d *sdeSession) Cancel(ctx context.Context) error { return sdeRetry(ctx, d.s.Cancel) }
func (d *sdeSession) Close() error                     { return nil }

// sdeAttempts bounds how often an SDE step is repeated after its SSH
// connection broke.
const sdeAttempts = 3

// sdeRetry runs step again after an error that is not the device's answer
// (a shell script or command that ran and failed): the session dropped,
// and the pool dials again for the next attempt.
func sdeRetry(ctx context.Context, step func(ctx context.Context) error) error {
	var err error
	for i := range sdeAttempts {
		if err = step(ctx); err == nil || deviceAnswered(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i+1) * 50 * time.Millisecond):
		}
	}
	return err
}

func deviceAnswered(err error) bool {
	var ce *sshdrv.CommandError
	var se *tofino.ShellError
	return errors.As(err, &ce) || errors.As(err, &se)
}
