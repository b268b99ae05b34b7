package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a command's flags before its positional arguments, so
// that "labctl report DIR --format md" works like "labctl report --format md
// DIR": urfave/cli v2 stops reading flags at the first positional argument.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds, flags := app.Commands, app.Flags
	i := 1
	// descend through (sub)command names
	for i < len(args) {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		out = append(out, args[i])
		cmds, flags = c.Subcommands, c.Flags
		i++
	}
	var fl, pos []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		fl = append(fl, a)
		if !strings.Contains(a, "=") && takesValue(flags, strings.TrimLeft(a, "-")) && i+1 < len(args) {
			i++
			fl = append(fl, args[i])
		}
	}
	return append(append(out, fl...), pos...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
