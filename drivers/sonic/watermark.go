package sonic

import (
	"context"
	"fmt"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// ClearWatermarksCommand restarts the user watermarks of every queue
// (unicast and multicast): sonic-utilities' `sonic-clear queue watermark
// all`, which runs `watermarkstat -c -t q_shared_all`; orchagent then
// zeroes USER_WATERMARKS. It needs root, hence sudo. The periodic
// watermarks sonic-gnmi streams (PERIODIC_WATERMARKS) restart on their own
// timer (FLEX_COUNTER_TABLE's QUEUE_WATERMARK poll), not with this.
const ClearWatermarksCommand = "sudo sonic-clear queue watermark all"

// ClearWatermarks runs ClearWatermarksCommand on switch t, so that a
// point's queue peaks are its own.
func (d *Driver) ClearWatermarks(ctx context.Context, t sshdrv.Target) error {
	res, err := d.SSH.Exec(ctx, t, ClearWatermarksCommand)
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return fmt.Errorf("switch %s: clear queue watermarks: %w", t.Name, err)
	}
	return nil
}
