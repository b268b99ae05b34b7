package emulator

import (
	"context"
	"fmt"
	"time"
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
	for _, t := range l.targets {
		if t.Name() == device {
			if err := t.Restart(ctx, down); err != nil {
				return fmt.Errorf("emulator: device %s: %w", device, err)
			}
			return nil
		}
	}
	return fmt.Errorf("emulator: lab %s has no switch %s with a gNMI server", l.inv.Name, device)
}
