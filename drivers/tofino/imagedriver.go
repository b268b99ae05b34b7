package tofino

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

// Driver manages program images on Tofino switches over SSH and SFTP.
// Make one with NewDriver; its fields may be changed before use.
type Driver struct {
	SSH *sshdrv.Pool
	// Root is labctl's directory on a switch: images in
	// Root/images/<name>/<version>, the state file Root/images/state.json,
	// bf_switchd's pid file and log in Root/run.
	Root string
	// SDEInstall is $SDE_INSTALL on the switches: bf_switchd is
	// SDEInstall/bin/bf_switchd, started with --install-dir SDEInstall.
	SDEInstall string
	StatusPort int // bf_switchd --status-port
	// HealthTimeout bounds the wait for a started program to be loaded.
	HealthTimeout time.Duration
	// StopTimeout bounds the wait for bf_switchd to exit after TERM (and
	// again after KILL).
	StopTimeout time.Duration
	// PortsUp, when set, is part of health: a started image is healthy
	// only once every port it reports is up. NewDriver reads the lab's
	// ports of the switch through the SDE shell (bfrt port.port $PORT_UP);
	// nil: ports are not checked.
	PortsUp func(ctx context.Context, t sshdrv.Target) (up, total int, err error)
	Logger  *slog.Logger
}

// NewDriver makes a driver for lab's switches with the defaults: SDE in
// /opt/bf-sde/install, labctl's files in /opt/labctl, status port 7777. A
// Tofino needs tens of seconds to load a program, so health is awaited up
// to 2 minutes; an emulated switch loads at once, and 3 seconds is plenty.
func NewDriver(pool *sshdrv.Pool, lab *inventory.Lab) *Driver {
	d := &Driver{SSH: pool, Root: defaultRoot, SDEInstall: "/opt/bf-sde/install", StatusPort: 7777,
		HealthTimeout: 2 * time.Minute, StopTimeout: 15 * time.Second, Logger: slog.New(slog.DiscardHandler)}
	if lab != nil && lab.Emulated {
		d.HealthTimeout, d.StopTimeout = 3*time.Second, 3*time.Second
	}
	if lab != nil {
		d.PortsUp = func(ctx context.Context, t sshdrv.Target) (int, int, error) {
			sde := NewSDEQoS(pool)           // with the driver's fields as they are now (they may change after NewDriver)
			sde.SDE = path.Dir(d.SDEInstall) // $SDE_INSTALL is $SDE/install
			sde.Root, sde.ScriptDir = d.Root, path.Join(d.Root, "qos")
			sw, _ := lab.Switch(t.Name)
			return sde.PortsUp(ctx, t, sw.PortNames())
		}
	}
	return d
}

// Progress hears about switches as they finish; nil is silent.
type Progress = sshdrv.Progress

// Outcomes of a Result.
const (
	Pushed         = "pushed"          // uploaded and verified on the switch
	Present        = "present"         // the same image was already there (verified)
	Activated      = "activated"       // running and healthy
	Unchanged      = "unchanged"       // it was already active and healthy
	Failed         = "failed"          // see Error; Rollback says what became of the switch
	RolledBack     = "rolled-back"     // activation failed; the previous image runs again
	RollbackFailed = "rollback-failed" // activation failed and so did bringing the previous image back
	// Degraded: re-activating the active image, which was not healthy,
	// failed; it runs as before, still not healthy.
	Degraded = "degraded"
)

// Result is what happened on one switch.
type Result struct {
	Switch   string `json:"switch"`
	Image    string `json:"image"`
	Outcome  string `json:"outcome"`
	Error    string `json:"error,omitempty"`
	Rollback string `json:"rollback,omitempty"`
	// Restarted says bf_switchd was stopped and started (cold) on the
	// switch: its SDE tables are back at their defaults, so QoS set
	// through the SDE shell must be set again.
	Restarted bool  `json:"switchd_restarted,omitempty"`
	err       error // Error as it came, for errors.As
}

// fail records err as r's failure.
func (r *Result) fail(err error) {
	r.Outcome, r.Error, r.err = Failed, err.Error(), err
}

// Targets are lab's switches as SSH targets, all of them or those named
// in only.
func Targets(lab *inventory.Lab, only []string) ([]sshdrv.Target, error) {
	return sshdrv.SwitchTargets(lab, only, sshdrv.EndpointSSH)
}

// defaultRoot is labctl's directory on a switch unless told otherwise.
const defaultRoot = "/opt/labctl"

// imageDir is where image ref lives under root on a switch.
func imageDir(root, ref string) string {
	name, version, _ := ParseRef(ref)
	return path.Join(root, "images", name, version)
}

// statePath is the image state file under root on a switch.
func statePath(root string) string { return path.Join(root, "images", "state.json") }

func (d *Driver) imageDir(ref string) string { return imageDir(d.Root, ref) }
func (d *Driver) statePath() string          { return statePath(d.Root) }
func (d *Driver) runDir() string             { return path.Join(d.Root, "run") }
func (d *Driver) logPath() string            { return path.Join(d.runDir(), "bf_switchd.log") }
func (d *Driver) pidPath() string            { return path.Join(d.runDir(), "bf_switchd.pid") }

// run runs cmd and returns its output; a non-zero exit is an error naming
// the device, the command and what it answered.
func (d *Driver) run(ctx context.Context, t sshdrv.Target, cmd string) ([]byte, error) {
	r, err := d.SSH.Exec(ctx, t, cmd)
	if err != nil {
		return nil, err
	}
	return r.Stdout, r.Err()
}

// each runs fn on every target with the pool's parallelism; results are
// in target order, whatever order the switches finish in. A target not
// started (ctx ended first) gets notStarted's result.
func each[T any](ctx context.Context, d *Driver, ts []sshdrv.Target, progress Progress,
	fn func(context.Context, sshdrv.Target) T, notStarted func(sshdrv.Target, error) T) []T {
	out, errs := sshdrv.Each(ctx, d.SSH, ts, progress, func(ctx context.Context, t sshdrv.Target) (T, error) {
		return fn(ctx, t), nil
	})
	for i, err := range errs {
		if err != nil { // fn never fails: only the targets not started
			out[i] = notStarted(ts[i], err)
		}
	}
	return out
}

// failedResult is a Result for a switch where nothing was done.
func failedResult(image string) func(sshdrv.Target, error) Result {
	return func(t sshdrv.Target, err error) Result {
		r := Result{Switch: t.Name, Image: image}
		r.fail(err)
		return r
	}
}

// joinResults is the error of a set of results: one line per switch that
// did not end well.
func joinResults(rs []Result) error {
	var errs []error
	for _, r := range rs {
		if r.Error == "" {
			continue
		}
		e := r.err
		if e == nil {
			e = errors.New(r.Error)
		}
		if r.Rollback != "" {
			e = fmt.Errorf("%w; rollback: %s", e, r.Rollback)
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Push uploads b to every target into Root/images/<name>/<version> and
// verifies it there with sha256sum. The upload goes to a staging directory
// that is renamed into place once verified, so a version directory is
// always complete. A version already on a switch is left alone if its
// manifest is byte for byte b's (and it still verifies), and refused
// otherwise: images are immutable.
func (d *Driver) Push(ctx context.Context, ts []sshdrv.Target, b *Bundle, progress Progress) ([]Result, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("image %s is not valid:\n%w", b.Source, err)
	}
	conf, err := os.ReadFile(filepath.Join(b.Dir, b.Manifest.ConfPath()))
	if err != nil {
		return nil, err
	}
	rs := each(ctx, d, ts, progress, func(ctx context.Context, t sshdrv.Target) Result {
		r := Result{Switch: t.Name, Image: b.Manifest.Ref()}
		var perr error
		if r.Outcome, perr = d.pushOne(ctx, t, b, conf); perr != nil {
			r.fail(perr)
		}
		return r
	}, failedResult(b.Manifest.Ref()))
	return rs, joinResults(rs)
}

func (d *Driver) pushOne(ctx context.Context, t sshdrv.Target, b *Bundle, conf []byte) (outcome string, err error) {
	m := b.Manifest
	dir := d.imageDir(m.Ref())
	have, err := d.SSH.ReadFile(ctx, t, path.Join(dir, ManifestFile))
	switch {
	case err == nil && !bytes.Equal(have, b.Raw):
		return "", fmt.Errorf("device %s: %s is already on the switch (%s) with another manifest; images are immutable: give this one a new version",
			t.Name, m.Ref(), dir)
	case err == nil:
		if err := d.verify(ctx, t, dir, m, conf); err != nil {
			return "", fmt.Errorf("%w (the copy already on the switch is damaged; remove %s by hand and push again)", err, dir)
		}
		return Present, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	staging := path.Join(path.Dir(dir), "."+m.Version+".partial")
	if _, err := d.run(ctx, t, "rm -rf "+sshdrv.Quote(staging)); err != nil {
		return "", err
	}
	defer func() { // a failed push leaves nothing behind, even when the caller gave up
		if err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, rerr := d.run(ctx, t, "rm -rf "+sshdrv.Quote(staging)); rerr != nil {
			err = fmt.Errorf("%w (removing the staging directory %s failed too: %v)", err, staging, rerr)
		}
	}()
	for _, f := range m.Files {
		if err := d.SSH.Upload(ctx, t, filepath.Join(b.Dir, filepath.FromSlash(f.Path)), path.Join(staging, f.Path), 0o644); err != nil {
			return "", err
		}
	}
	installed, err := InstallConf(conf, dir)
	if err != nil {
		return "", err
	}
	if err := d.SSH.WriteFile(ctx, t, path.Join(staging, InstalledConfFile), installed, 0o644); err != nil {
		return "", err
	}
	if err := d.SSH.WriteFile(ctx, t, path.Join(staging, ManifestFile), b.Raw, 0o644); err != nil {
		return "", err
	}
	if err := d.verify(ctx, t, staging, m, conf); err != nil {
		return "", err
	}
	if _, err := d.run(ctx, t, "mv -T "+sshdrv.Quote(staging)+" "+sshdrv.Quote(dir)); err != nil {
		return "", err
	}
	return Pushed, nil
}

// verify checks an image's files in dir on the switch with sha256sum: the
// manifest's files and the installed conf derived from conf for the
// image's final directory.
func (d *Driver) verify(ctx context.Context, t sshdrv.Target, dir string, m *Manifest, conf []byte) error {
	installed, err := InstallConf(conf, d.imageDir(m.Ref()))
	if err != nil {
		return fmt.Errorf("device %s: %s: %w", t.Name, m.ConfPath(), err)
	}
	sum := sha256.Sum256(installed)
	want := map[string]string{path.Join(dir, InstalledConfFile): hex.EncodeToString(sum[:])}
	for _, f := range m.Files {
		want[path.Join(dir, f.Path)] = f.SHA256
	}
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	cmd := "sha256sum"
	for _, p := range paths {
		cmd += " " + sshdrv.Quote(p)
	}
	r, err := d.SSH.Exec(ctx, t, cmd)
	if err != nil {
		return err
	}
	got, perr := ParseSHA256Sum(r.Stdout)
	if perr != nil {
		return fmt.Errorf("device %s: command %q: %w", t.Name, cmd, perr)
	}
	var bad []string
	for _, p := range paths {
		switch g, ok := got[p]; {
		case !ok:
			bad = append(bad, strings.TrimPrefix(p, dir+"/")+" is missing")
		case g != want[p]:
			bad = append(bad, fmt.Sprintf("%s has sha256 %s, want %s", strings.TrimPrefix(p, dir+"/"), g, want[p]))
		}
	}
	if len(bad) > 0 {
		msg := strings.Join(bad, "; ")
		if e := strings.TrimSpace(string(r.Stderr)); e != "" {
			msg += " (" + e + ")"
		}
		return fmt.Errorf("device %s: command %q answered: %s", t.Name, cmd, msg)
	}
	return r.Err()
}

// installedImage reads image ref's manifest and conf on the switch and
// verifies its files.
func (d *Driver) installedImage(ctx context.Context, t sshdrv.Target, ref string) (*Manifest, error) {
	m, err := readManifest(ctx, d.SSH, t, d.Root, ref)
	if err != nil {
		return nil, err
	}
	dir := d.imageDir(ref)
	conf, err := d.SSH.ReadFile(ctx, t, path.Join(dir, m.ConfPath()))
	if err != nil {
		return nil, err
	}
	return m, d.verify(ctx, t, dir, m, conf)
}

// ErrNotPushed is an image that is not on a switch.
var ErrNotPushed = errors.New("image not on the switch")

// readManifest reads image ref's manifest on switch t (under root); an
// image that is not there is ErrNotPushed.
func readManifest(ctx context.Context, pool *sshdrv.Pool, t sshdrv.Target, root, ref string) (*Manifest, error) {
	if _, _, err := ParseRef(ref); err != nil {
		return nil, err
	}
	dir := imageDir(root, ref)
	raw, err := pool.ReadFile(ctx, t, path.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("device %s: image %s is not on the switch (%s): push it first: %w", t.Name, ref, dir, ErrNotPushed)
	}
	if err != nil {
		return nil, err
	}
	return ParseManifest(raw, t.Name+":"+path.Join(dir, ManifestFile))
}
