package reports

import "github.com/labctl/labctl/collectors"

// pointsSource serves telemetry already in memory.
func pointsSource(pts []collectors.Point) TelemetrySource {
	return func(fn func(collectors.Point) error) error {
		for _, p := range pts {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// rowsSource serves flow rows already in memory.
func rowsSource(rows []FlowRow) FlowSource {
	return func(fn func(FlowRow) error) error {
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}
