package tofino

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
)

// Health is a switch's program as labctl sees it: bf_switchd running, its
// log saying the image's program is loaded on a device and its servers
// started, and (when Driver.PortsUp is set) every port the lab lists for
// the switch up.
//
// The SDE documents no health query (the status server on the status port
// speaks an undocumented protocol to run_bfshell.sh), so labctl reads what
// bf_switchd itself prints; see imageswitchd.go.
type Health struct {
	Running bool       `json:"running"`
	Log     SwitchdLog `json:"log"`
	Program string     `json:"program"`
	Loaded  bool       `json:"program_loaded"`
	// Ports is -1 when ports are not checked.
	PortsUp int `json:"ports_up"`
	Ports   int `json:"ports"`
	// PortsError is why the port state could not be read (e.g. the SDE
	// shell not answering yet while BF-Runtime starts): not healthy yet.
	PortsError string `json:"ports_error,omitempty"`
}

// Healthy is every check passing.
func (h Health) Healthy() bool {
	return h.Running && h.Loaded && h.PortsError == "" && (h.Ports < 0 || h.PortsUp == h.Ports)
}

// Problem says what is not healthy, in a few words.
func (h Health) Problem() string {
	switch {
	case !h.Running:
		return "bf_switchd is not running"
	case h.Log.Devices == 0:
		return fmt.Sprintf("no device initialized, program %s not loaded", h.Program)
	case !h.Loaded:
		return fmt.Sprintf("program %s not loaded yet", h.Program)
	case h.PortsError != "":
		return "the port state could not be read: " + h.PortsError
	case h.Ports >= 0 && h.PortsUp < h.Ports:
		return fmt.Sprintf("%d of %d ports up", h.PortsUp, h.Ports)
	}
	return ""
}

// health reads one switch's health for image m. A port state that cannot
// be read is part of the health (PortsError), not an error: on a real
// switch the SDE shell may not answer until BF-Runtime is up.
func (d *Driver) health(ctx context.Context, t sshdrv.Target, m *Manifest) (Health, error) {
	h := Health{Program: m.Program, PortsUp: -1, Ports: -1}
	pids, err := d.pids(ctx, t)
	if err != nil {
		return h, err
	}
	h.Running = len(pids) > 0
	r, err := d.SSH.Exec(ctx, t, "cat "+sshdrv.Quote(d.logPath()))
	if err != nil {
		return h, err
	}
	if r.ExitStatus == 0 { // no log: never started by labctl
		h.Log = ParseSwitchdLog(r.Stdout)
	} else {
		h.Log = SwitchdLog{Devices: -1}
	}
	h.Loaded = h.Log.Loaded(m.Program) && h.Log.Ready
	if d.PortsUp != nil && h.Running && h.Loaded {
		if h.PortsUp, h.Ports, err = d.PortsUp(ctx, t); err != nil {
			h.PortsUp, h.Ports, h.PortsError = 0, -1, err.Error()
		}
	}
	return h, nil
}

// waitHealthy polls health until it is good, bf_switchd has exited or
// finished initializing without the program, or HealthTimeout passes.
func (d *Driver) waitHealthy(ctx context.Context, t sshdrv.Target, m *Manifest) error {
	deadline := time.Now().Add(d.HealthTimeout)
	for {
		h, err := d.health(ctx, t, m)
		if err != nil {
			return err
		}
		if h.Healthy() {
			return nil
		}
		// bf_switchd prints its device count once, when it is done adding
		// devices: a count without the program is final.
		settled := h.Log.Devices >= 0 && !h.Log.Loaded(m.Program)
		if !h.Running || settled || time.Now().After(deadline) {
			why := "within " + d.HealthTimeout.String()
			switch {
			case !h.Running:
				why = "before it exited"
			case settled:
				why = "after it initialized its devices"
			}
			return fmt.Errorf("device %s: %s: %s did not become healthy %s: %s; command %q answered: %s",
				t.Name, m.Ref(), "bf_switchd", why, h.Problem(), "cat "+d.logPath(), quoteLog(h.Log))
		}
		if err := sleep(ctx, d.pollEvery()); err != nil {
			return fmt.Errorf("device %s: waiting for %s to load: %w", t.Name, m.Ref(), err)
		}
	}
}

// quoteLog is what to quote of a log: the lines that tell how loading
// went, else the last ones.
func quoteLog(l SwitchdLog) string {
	tail := l.Notes
	if len(tail) == 0 {
		tail = l.Tail
	}
	if len(tail) == 0 {
		return "(no output)"
	}
	if len(tail) > 3 {
		tail = tail[len(tail)-3:]
	}
	return strings.Join(tail, " | ")
}

// Status is one switch's images and health.
type Status struct {
	Switch   string   `json:"switch"`
	Active   string   `json:"active"`
	Previous string   `json:"previous"`
	Health   *Health  `json:"health,omitempty"`
	Healthy  bool     `json:"healthy"`
	Last     *Attempt `json:"last,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// Status reads every target's state file and the health of its active
// image.
func (d *Driver) Status(ctx context.Context, ts []sshdrv.Target, progress Progress) ([]Status, error) {
	out := each(ctx, d, ts, progress, func(ctx context.Context, t sshdrv.Target) Status {
		s := Status{Switch: t.Name}
		st, err := d.readState(ctx, t)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		s.Active, s.Previous, s.Last = st.Active, st.Previous, st.Last
		if st.Active == "" {
			return s
		}
		m, err := d.installedImage(ctx, t, st.Active)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		h, err := d.health(ctx, t, m)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		s.Health, s.Healthy = &h, h.Healthy()
		return s
	}, func(t sshdrv.Target, err error) Status { return Status{Switch: t.Name, Error: err.Error()} })
	var errs []error
	for _, s := range out {
		if s.Error != "" {
			errs = append(errs, errors.New(s.Error))
		}
	}
	return out, errors.Join(errs...)
}
