// Package testlab starts emulated labs for tests: the lab, its inventory
// (with the endpoints, credentials and known_hosts the lab generated) and
// an SSH pool that trusts it, all closed when the test ends.
//
// Only tests import it; tests inside package emulator cannot (it imports
// emulator).
//
// Imports within labctl: only emulator, inventory, drivers/ssh.
package testlab

import (
	"context"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// Start starts the generated lab spec, after edit (if not nil) changed its
// inventory, with opt (in a temporary directory unless opt.Dir is set), and
// an SSH pool configured as cfg with the lab's known_hosts.
func Start(tb testing.TB, spec string, edit func(*inventory.Lab), opt emulator.Options, cfg sshdrv.Config) (*emulator.Lab, *inventory.Lab, *sshdrv.Pool) {
	tb.Helper()
	src, err := inventory.Generate(spec)
	if err != nil {
		tb.Fatal(err)
	}
	if edit != nil {
		edit(src)
	}
	if opt.Dir == "" {
		opt.Dir = tb.TempDir()
	}
	l, err := emulator.Start(context.Background(), src, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	cfg.KnownHosts = inv.KnownHosts
	pool := sshdrv.NewPool(cfg)
	tb.Cleanup(func() { pool.Close() })
	return l, inv, pool
}

// Target is a device's SSH (or NETCONF) endpoint in the lab.
func Target(tb testing.TB, inv *inventory.Lab, name string, e sshdrv.Endpoint) sshdrv.Target {
	tb.Helper()
	t, err := sshdrv.DeviceTarget(inv, name, e)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}
