package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// commandTree is every command of labctl by its path ("image status").
func commandTree() map[string]*cli.Command {
	out := map[string]*cli.Command{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(prefix + " " + c.Name)
			out[path] = c
			walk(path, c.Subcommands)
		}
	}
	walk("", newApp().Commands)
	return out
}

func flagNamed(c *cli.Command, name string) cli.Flag {
	for _, f := range c.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// flagDefault is a flag's default value as text.
func flagDefault(f cli.Flag) string {
	v := reflect.ValueOf(f)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return fmt.Sprint(v.FieldByName("Value").Interface())
}

// printing are the commands that print results: each takes --format.
var printing = []string{
	"run", "runs", "report", "compare", "capacity", "regress",
	"image validate", "image schemes", "image push", "image activate", "image rollback", "image status",
	"inventory validate", "inventory show", "lab status",
	"provision plan", "provision apply", "provision verify", "telemetry replay",
	// action verbs: what they did, for scripts
	"lab up", "lab down", "lab reserve", "lab release", "lab fault", "regress promote", "inventory ansible",
}

// The command tree keeps one CLI convention: every command that prints
// results has --format built by newFormatFlag (same Usage sentence, at
// least table, json and md); --json appears only beside --format; each
// verb that runs scenarios on a lab has every shared flag (same names,
// aliases and defaults as the groups make them); the worker takes the gNMI
// flags the executor passes; telemetry replay takes the InfluxDB flags.
func TestCommandTreeSharesFlags(t *testing.T) {
	t.Parallel()
	tree := commandTree()
	for _, path := range printing {
		c, ok := tree[path]
		if !ok {
			t.Errorf("no command %q (update the list)", path)
			continue
		}
		f, ok := flagNamed(c, "format").(*formatFlag)
		if !ok {
			t.Errorf("%s: prints results but has no --format of newFormatFlag", path)
			continue
		}
		if f.Usage != formatUsage(f.Formats) {
			t.Errorf("%s: --format usage %q, want %q", path, f.Usage, formatUsage(f.Formats))
		}
		for _, want := range resultFormats {
			if !slices.Contains(f.Formats, want) {
				t.Errorf("%s: --format lacks %s", path, want)
			}
		}
	}
	for path, c := range tree {
		if flagNamed(c, "json") != nil && flagNamed(c, "format") == nil {
			t.Errorf("%s: --json without --format", path)
		}
		if f := flagNamed(c, "format"); f != nil && !slices.Contains(printing, path) {
			t.Errorf("%s has --format but is not in the list of printing commands", path)
		}
	}
	shared := map[string][]cli.Flag{
		"run":      labRunFlags(),
		"capacity": labRunFlags(),
		"worker":   gnmiFlags(),
		// the run's InfluxDB by default: names as the run's, usage its own
		"telemetry replay": influxFlags(true),
	}
	for path, flags := range shared {
		c := tree[path]
		for _, want := range flags {
			name := want.Names()[0]
			got := flagNamed(c, name)
			if got == nil {
				t.Errorf("%s lacks --%s", path, name)
				continue
			}
			if !slices.Equal(got.Names(), want.Names()) || reflect.TypeOf(got) != reflect.TypeOf(want) || flagDefault(got) != flagDefault(want) {
				t.Errorf("%s: --%s is %T %v default %q; the shared group's is %T %v default %q",
					path, name, got, got.Names(), flagDefault(got), want, want.Names(), flagDefault(want))
			}
		}
	}
}

// A flag that appears in several commands means the same there: same
// type, aliases and default, but for the few listed here whose meaning
// differs by verb on purpose.
func TestFlagNamesMeanOneThing(t *testing.T) {
	t.Parallel()
	differ := map[string]string{
		"format": "default md for report and compare; for run and capacity by whether stderr is a terminal",
		"out":    "report and compare write one FILE, the others take the archives' parent",
		"lab":    "required where the lab must already be up (provision, image)",
		"strict": "regress refuses degraded runs by default; run reports them by its exit status only when asked",
		"for":    "lab reserve holds a lab 4h by default; lab fault's duration has no default",
	}
	first := map[string]string{} // flag -> the first command's path
	tree := commandTree()
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		for _, f := range tree[path].Flags {
			name := f.Names()[0]
			if _, ok := differ[name]; ok {
				continue
			}
			p0, seen := first[name]
			if !seen {
				first[name] = path
				continue
			}
			f0 := flagNamed(tree[p0], name)
			if !slices.Equal(f.Names(), f0.Names()) || reflect.TypeOf(f) != reflect.TypeOf(f0) || flagDefault(f) != flagDefault(f0) {
				t.Errorf("--%s: %s has %T %v default %q, %s has %T %v default %q", name,
					path, f, f.Names(), flagDefault(f), p0, f0, f0.Names(), flagDefault(f0))
			}
		}
	}
}
