package provision

import (
	"context"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

// CommitNothing sends a NETCONF switch a plain commit of its unchanged
// candidate: a no-op, unless a persistent confirmed commit is pending,
// which the switch then names in an rpc-error.
func CommitNothing(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, name string) error {
	t, err := sshdrv.DeviceTarget(lab, name, sshdrv.EndpointNETCONF)
	if err != nil {
		return err
	}
	s, err := netconf.Dial(ctx, pool, t)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Confirm(ctx)
}
