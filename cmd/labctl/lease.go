package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/lease"
)

// leaseTTL is how long a command's lease outlives its last renewal: a
// crashed command's lab is free again this long after it died at most
// (at once on its own host, where its pid is seen to be gone).
const leaseTTL = 30 * time.Second

var waitFlag = &cli.DurationFlag{Name: "wait", Usage: "if another command or user holds the lab, wait up to this long for it (e.g. --wait 10m); by default fail at once naming the holder"}

// labLease is where lab name's lease lives, and whether commands must
// take it (shared): a hardware lab file keeps it beside the file
// (LAB.lease, so every controller that reads the lab file sees it); an
// emulated lab under $LABCTL_HOME/labs/<name>/lease.json, taken only while
// the lab is up (otherwise each command starts a private lab of its own).
func labLease(name string) (store lease.FileStore, shared bool, err error) {
	st, up, err := runningLab(name)
	if err != nil {
		return store, false, err
	}
	if up { // by the name it was started with, whatever name reached it
		return lease.FileStore{Path: filepath.Join(emulator.StateDir(home(), st.Name), "lease.json")}, true, nil
	}
	if inventory.IsGeneratorSpec(name) {
		return store, false, nil
	}
	lab, err := inventory.ResolveWith(name, qosdriver.Builtin())
	if err != nil {
		return store, false, err
	}
	if lab.Emulated {
		return store, false, nil
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return store, false, err
	}
	return lease.FileStore{Path: abs + ".lease"}, true, nil
}

// takeLab takes lab name's lease for command (if the lab is shared),
// waiting up to wait; the returned func releases it, and says (and
// returns) whether the lease was lost meanwhile: another command may then
// have changed the lab under this one, whose results must not pass as ok.
func takeLab(ctx context.Context, name, command string, wait time.Duration) (func() error, error) {
	store, shared, err := labLease(name)
	if err != nil || !shared { // a lab that does not load is not touched: the command reports why (after its usage checks)
		return func() error { return nil }, nil
	}
	say := func(m string) { fmt.Fprintln(os.Stderr, "labctl:", m) }
	h, err := lease.Acquire(ctx, store, name, command, lease.Options{TTL: leaseTTL, Wait: wait, Notify: say, Logger: newLogger(false)})
	var held *lease.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w; retry with --wait DURATION, or ask %s", err, held.Holder.Owner())
	}
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := h.Release(context.Background()); err != nil {
			return fmt.Errorf("lab %s: %w (another command may have changed the lab meanwhile)", name, err)
		}
		return nil
	}, nil
}

// leased makes the named subcommands of cmd take the lease of their
// --lab before they act and release it after.
func leased(cmd *cli.Command, subs ...string) *cli.Command {
	for _, s := range cmd.Subcommands {
		for _, name := range subs {
			if s.Name != name {
				continue
			}
			s.Flags = append(slices.Clip(s.Flags), waitFlag) // Flags may share an array with a sibling's
			act, command := s.Action, cmd.Name+" "+s.Name
			s.Action = func(c *cli.Context) error {
				release, err := takeLab(c.Context, c.String("lab"), command, c.Duration("wait"))
				if err != nil {
					return err
				}
				err = act(c)
				if lerr := release(); lerr != nil {
					return errors.Join(err, lerr)
				}
				return err // as it is: its exit status rides on its type
			}
		}
	}
	return cmd
}

// holder is the live lease of lab name, if any.
func holder(name string) *lease.Lease {
	store, _, err := labLease(name)
	if err != nil {
		return nil
	}
	l, ok, err := store.Read(context.Background())
	if err != nil || !ok || l.Stale(time.Now()) != "" {
		return nil
	}
	return &l
}

func reserveCommand() *cli.Command {
	return &cli.Command{
		Name: "reserve", Usage: "hold a lab for yourself (other users' runs, provisioning and lab down wait or fail)", ArgsUsage: "LAB",
		Description: `Reserves LAB for you until --for has passed or 'labctl lab release LAB'. Your own
commands (same user name) still run on it; everyone else's wait (--wait) or
fail naming you. An emulated lab's lease is $LABCTL_HOME/labs/<name>/lease.json;
a hardware lab file's is the file LAB.lease beside it, so keep hardware lab
files on a directory every controller host mounts.

--format json prints {lab, held_by, expires, note} for scripts.

Examples:
   labctl lab reserve lab.yaml --for 4h --note "PFC headroom sweep"
   labctl lab reserve lab.yaml --for 1h --format json | jq -r .expires`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "for", Value: 4 * time.Hour, Usage: "how long to hold the lab"},
			&cli.StringFlag{Name: "note", Usage: "why, shown to whoever finds the lab held"},
			newFormatFlag(formatTable),
		},
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 || c.Duration("for") <= 0 {
				return exitError{2, fmt.Errorf("lab reserve needs one LAB and a positive --for")}
			}
			name := c.Args().First()
			store, _, err := labLease(name)
			if err != nil {
				return err
			}
			l := lease.New(name, "lab reserve", c.Duration("for"))
			l.PID, l.PIDTime, l.Manual, l.Note = 0, 0, true, c.String("note")
			replaced, err := store.Take(c.Context, l)
			var held *lease.HeldError
			if errors.As(err, &held) && held.Holder.Manual && held.Holder.User == l.User { // my own: move its end
				l.Token, l.Since = held.Holder.Token, held.Holder.Since
				err = store.Renew(c.Context, l)
			}
			if err != nil {
				return err
			}
			if replaced != nil {
				fmt.Fprintf(os.Stderr, "labctl: lab %s: took over the lease of %s: %s\n", name, replaced, replaced.Stale(time.Now()))
			}
			r := reservation{Lab: name, HeldBy: l.Owner(), Expires: l.Expires.UTC(), Note: l.Note}
			until := l.Expires.Local().Format(time.RFC3339)
			return printAction(format, r, fmt.Sprintf("lab %s reserved by %s until %s", name, r.HeldBy, until),
				[]string{"LAB", "HELD BY", "UNTIL", "NOTE"}, []string{name, r.HeldBy, until, r.Note})
		},
	}
}

func releaseCommand() *cli.Command {
	return &cli.Command{
		Name: "release", Usage: "end a reservation of a lab (--force: whoever holds it)", ArgsUsage: "LAB",
		Description: `Ends your reservation of LAB (--force: anyone's, or a running command's
lease). --format json prints {lab, released, was_held_by}; released is false
when nobody held the lab.

Examples:
   labctl lab release lab.yaml
   labctl lab release lab.yaml --force --format json`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "release another user's reservation or a running command's lease"}, newFormatFlag(formatTable)},
		Action: func(c *cli.Context) error {
			format, err := checkFormat(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return exitError{2, fmt.Errorf("lab release needs one LAB")}
			}
			name := c.Args().First()
			store, _, err := labLease(name)
			if err != nil {
				return err
			}
			l, ok, err := store.Read(c.Context)
			if err != nil {
				return err
			}
			if !ok {
				return printAction(format, releaseResult{Lab: name}, fmt.Sprintf("lab %s is not held", name),
					[]string{"LAB", "RELEASED", "WAS HELD BY"}, []string{name, "false", "-"})
			}
			me := lease.New(name, "", 0)
			if !c.Bool("force") && l.Stale(time.Now()) == "" && (!l.Manual || l.User != me.User) {
				return fmt.Errorf("lab %s is held by %s; --force releases it anyway", name, l)
			}
			if err := store.Release(c.Context, l); err != nil {
				return err
			}
			r := releaseResult{Lab: name, Released: true, WasHeldBy: l.Owner()}
			return printAction(format, r, fmt.Sprintf("lab %s released (was held by %s)", name, r.WasHeldBy),
				[]string{"LAB", "RELEASED", "WAS HELD BY"}, []string{name, "true", r.WasHeldBy})
		},
	}
}

// reservation is what lab reserve --format json prints.
type reservation struct {
	Lab     string    `json:"lab"`
	HeldBy  string    `json:"held_by"` // user@host
	Expires time.Time `json:"expires"`
	Note    string    `json:"note,omitempty"`
}

// releaseResult is what lab release --format json prints: Released false when
// nobody held the lab.
type releaseResult struct {
	Lab       string `json:"lab"`
	Released  bool   `json:"released"`
	WasHeldBy string `json:"was_held_by,omitempty"`
}

// printHolder shows who holds a hardware lab.
func printHolder(name, format string) error {
	l := holder(name)
	return printResult(os.Stdout, format, map[string]any{"name": name, "lease": l}, func() table {
		t := table{Head: []string{"LAB", "HELD BY"}}
		held := "-"
		if l != nil {
			held = l.String()
		}
		t.add(name, held)
		return t
	}, func(w io.Writer) error {
		if l == nil {
			_, err := fmt.Fprintf(w, "lab %s is not held\n", name)
			return err
		}
		_, err := fmt.Fprintf(w, "lab %s is held by %s\n", name, l)
		return err
	})
}
