package sonic

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/switchqos"
)

// Driver sets QoS on SONiC switches over SSH. The login user runs
// `sudo config ...` (SONiC's admin may), and reads CONFIG_DB with
// `sonic-cfggen -d --print-data`.
type Driver struct {
	SSH *sshdrv.Pool
	// Dir is where patches are uploaded: relative to the login directory
	// by default, since SONiC's admin may write only there. The last patch
	// stays for a person to look at.
	Dir string
	// StepTimeout bounds a rollback that must run after its caller's
	// context ended (a stage that failed or was interrupted).
	StepTimeout time.Duration
}

// New is a driver with the defaults (patches in ~/labctl-qos).
func New(pool *sshdrv.Pool) *Driver {
	return &Driver{SSH: pool, Dir: "labctl-qos", StepTimeout: 2 * time.Minute}
}

// Session is one switch for one plan or apply: Read, Stage (checkpoint,
// apply-patch), Check, then Confirm (save, delete the checkpoint) or
// Cancel (rollback to the checkpoint). It has the methods provision's
// switch session asks for.
type Session struct {
	d          *Driver
	t          sshdrv.Target
	ports      []string
	have       DB // from the last Read
	checkpoint string
}

// Session is a session on switch t, whose front-panel ports are ports.
func (d *Driver) Session(t sshdrv.Target, ports []string) *Session {
	return &Session{d: d, t: t, ports: ports}
}

// Ports is the ports the session reads.
func (s *Session) Ports() []string { return s.ports }

// checkpointRE is the names Stage gives its checkpoints; nothing else is
// ever rolled back to or deleted.
var checkpointRE = regexp.MustCompile(`^labctl-[A-Za-z0-9_.-]{1,80}$`)

func (s *Session) run(ctx context.Context, words ...string) (*sshdrv.Result, error) {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = sshdrv.Quote(w)
	}
	res, err := s.d.SSH.Exec(ctx, s.t, strings.Join(q, " "))
	if err != nil {
		return nil, err
	}
	return res, res.Err()
}

// Read is every port's QoS as CONFIG_DB holds it.
func (s *Session) Read(ctx context.Context) ([]string, map[string]switchqos.Config, error) {
	res, err := s.run(ctx, "sonic-cfggen", "-d", "--print-data")
	if err != nil {
		return nil, nil, err
	}
	db, err := ParseDB(res.Stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("device %s: %w", s.t.Name, err)
	}
	out := map[string]switchqos.Config{}
	for _, p := range s.ports {
		if out[p], err = ParseQoS(db, p); err != nil {
			return nil, nil, fmt.Errorf("device %s: %w", s.t.Name, err)
		}
	}
	s.have = db
	return s.ports, out, nil
}

// Want is want unchanged: CONFIG_DB holds bytes as given.
func (s *Session) Want(w switchqos.Config) switchqos.Config { return w }

// Stage checkpoints the running configuration and applies the patch from
// it to want. If apply-patch fails the switch is rolled back to the
// checkpoint (restored), even when ctx has ended.
func (s *Session) Stage(ctx context.Context, want switchqos.Config) (bool, error) {
	if s.have == nil {
		if _, _, err := s.Read(ctx); err != nil {
			return false, err
		}
	}
	desired, err := Render(s.have, s.ports, want)
	if err != nil {
		return false, fmt.Errorf("device %s: %w", s.t.Name, err)
	}
	ops := Patch(s.have, desired)
	if len(ops) == 0 {
		return false, nil
	}
	data, err := json.MarshalIndent(ops, "", "    ")
	if err != nil {
		return false, err
	}
	name := "labctl-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if !checkpointRE.MatchString(name) {
		return false, fmt.Errorf("device %s: bad checkpoint name %q", s.t.Name, name)
	}
	file := path.Join(s.d.Dir, "qos-patch.json")
	if err := s.d.SSH.WriteFile(ctx, s.t, file, append(data, '\n'), 0o644); err != nil {
		return false, err
	}
	if _, err := s.run(ctx, "sudo", "config", "checkpoint", name); err != nil {
		return false, err
	}
	s.checkpoint = name
	if _, err := s.run(ctx, "sudo", "config", "apply-patch", file); err != nil {
		if rerr := s.rollback(ctx); rerr != nil {
			return false, fmt.Errorf("%w; and rolling back: %w", err, rerr)
		}
		return true, err
	}
	return false, nil
}

// rollback returns the switch to the stage's checkpoint and deletes it;
// it runs to its end even if ctx has ended (bounded by StepTimeout).
func (s *Session) rollback(ctx context.Context) error {
	if s.checkpoint == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.d.StepTimeout)
	defer cancel()
	if _, err := s.run(ctx, "sudo", "config", "rollback", s.checkpoint); err != nil {
		return err
	}
	return s.forget(ctx)
}

func (s *Session) forget(ctx context.Context) error {
	_, err := s.run(ctx, "sudo", "config", "delete-checkpoint", s.checkpoint)
	if err == nil {
		s.checkpoint = ""
	}
	return err
}

// Check reads the switch back: nil if every port holds want.
func (s *Session) Check(ctx context.Context, want switchqos.Config) error {
	ports, have, err := s.Read(ctx)
	if err != nil {
		return err
	}
	if d := switchqos.MergePorts(ports, have, want); len(d) > 0 {
		return fmt.Errorf("device %s: read-back: %d settings differ, first %s = %s (want %s)", s.t.Name, len(d), d[0].Field, d[0].From, d[0].To)
	}
	return nil
}

// Confirm saves the running configuration (config_db.json, so that it
// survives a reboot) and deletes the checkpoint.
func (s *Session) Confirm(ctx context.Context) error {
	if s.checkpoint == "" {
		return nil
	}
	if _, err := s.run(ctx, "sudo", "config", "save", "-y"); err != nil {
		return err
	}
	return s.forget(ctx)
}

// Cancel rolls the switch back to the checkpoint Stage took.
func (s *Session) Cancel(ctx context.Context) error { return s.rollback(ctx) }

// Close has nothing to release: the pool owns the connection.
func (s *Session) Close() error { return nil }
