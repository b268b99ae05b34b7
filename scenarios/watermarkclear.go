package scenarios

import (
	"context"
	"fmt"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/sonic"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// clearWatermarks restarts the queue watermarks of the lab's SONiC
// switches before a point's traffic (sonic.ClearWatermarksCommand), as the
// fabric twin does for an emulated lab's every switch, so that a point's
// queue peaks are its own and not an earlier point's. A switch that cannot
// be cleared does not stop the point: its watermarks may then hold an
// earlier peak, which the returned warning says.
func (sess *session) clearWatermarks(ctx context.Context, point string) []string {
	reg := qosdriver.Builtin()
	var targets []sshdrv.Target
	var warnings []string
	for _, sw := range sess.lab.Switches {
		if d, err := reg.Pick(sw.QoSDriver, sw.OS, sw.Model); err != nil || d != qosdriver.SONiC {
			continue
		}
		t, err := sess.target(sw.Name)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("point %s: queue watermarks of switch %s not cleared: %v", point, sw.Name, err))
			continue
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return warnings
	}
	d := sonic.New(sess.ssh)
	_, errs := sshdrv.Each(ctx, sess.ssh, targets, nil, func(ctx context.Context, t sshdrv.Target) (struct{}, error) {
		return struct{}{}, d.ClearWatermarks(ctx, t)
	})
	for _, err := range errs {
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("point %s: queue watermarks may hold an earlier point's peak: %v", point, err))
		}
	}
	return warnings
}
