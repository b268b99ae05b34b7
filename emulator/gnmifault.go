package emulator

import (
	"context"
	"fmt"
	"time"

	"github.com/labctl/labctl/emulator/gnmitarget"
)

// RestartGNMI restarts switch device's gNMI server, as a crashed or
// upgraded telemetry daemon would: every stream ends, the listener closes
// and the server serves again on the same address. It returns once the
// target serves again.
func (l *Lab) RestartGNMI(ctx context.Context, device string) error {
	return l.RestartGNMIFor(ctx, device, 0)
}

// RestartGNMIFor is RestartGNMI with the server down for down before it
// serves again.
func (l *Lab) RestartGNMIFor(ctx context.Context, device string, down time.Duration) error {
	t, err := l.gnmiTarget(device)
	if err != nil {
		return err
	}
	if err := t.Restart(ctx, down); err != nil {
		return fmt.Errorf("emulator: device %s: %w", device, err)
	}
	return nil
}

// GarbleGNMI makes switch device's COUNTERS_DB samples read "N/A" for one
// PFC counter of every port, for d (gnmitarget.Target.GarbleFor).
func (l *Lab) GarbleGNMI(device string, d time.Duration) error {
	t, err := l.gnmiTarget(device)
	if err != nil {
		return err
	}
	t.GarbleFor(d)
	return nil
}

func (l *Lab) gnmiTarget(device string) (*gnmitarget.Target, error) {
	for _, t := range l.targets {
		if t.Name() == device {
			return t, nil
		}
	}
	return nil, fmt.Errorf("emulator: lab %s has no switch %s with a gNMI server", l.inv.Name, device)
}
