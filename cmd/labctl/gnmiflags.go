package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/collectors"
)

// gnmiFlags set how a run's collectors reach the switches' gNMI, over
// what the lab file's gnmi_tls says (TLS by default, plaintext only when
// asked for). A password is read from the environment or a file, never
// from a flag's value.
func gnmiFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-ca", Usage: "verify the switches' gNMI certificates against this CA `FILE` (default: the lab file's gnmi_tls.ca, a switch's own over it, else the system roots)"},
		&cli.BoolFlag{Name: "tls-skip-verify", Usage: "accept any gNMI server certificate (encrypted but unauthenticated; warns on every run)"},
		&cli.BoolFlag{Name: "gnmi-plaintext", Usage: "speak gNMI without TLS"},
		&cli.StringFlag{Name: "gnmi-username", Usage: "gNMI username (default: the lab file's gnmi_tls.credential)"},
		&cli.StringFlag{Name: "gnmi-password-env", Value: "LABCTL_GNMI_PASSWORD", Usage: "environment variable holding the gNMI password"},
		&cli.StringFlag{Name: "gnmi-password-file", Usage: "file whose first line is the gNMI password"},
	}
}

// gnmiSecurity is what the gNMI flags set (collectors.GNMISecurity.Over
// lays it over the lab file's).
func gnmiSecurity(c *cli.Context) (collectors.GNMISecurity, error) {
	s := collectors.GNMISecurity{CAFile: c.String("tls-ca"), SkipVerify: c.Bool("tls-skip-verify"), Plaintext: c.Bool("gnmi-plaintext")}
	if s.Plaintext && (s.CAFile != "" || s.SkipVerify) {
		return s, exitError{2, fmt.Errorf("--gnmi-plaintext excludes --tls-ca and --tls-skip-verify")}
	}
	if s.CAFile != "" && s.SkipVerify {
		return s, exitError{2, fmt.Errorf("--tls-ca and --tls-skip-verify exclude each other")}
	}
	if s.Username = c.String("gnmi-username"); s.Username == "" {
		return s, nil
	}
	pw, err := collectors.ReadSecret(c.String("gnmi-password-env"), c.String("gnmi-password-file"))
	if err != nil {
		return s, err
	}
	if pw == "" {
		return s, exitError{2, fmt.Errorf("--gnmi-username %s: no password in $%s or --gnmi-password-file", s.Username, c.String("gnmi-password-env"))}
	}
	s.Password = pw
	return s, nil
}

// gnmiArgs are the gNMI flags c was given, as arguments for another
// labctl (a Slurm worker, which runs in another directory: file names are
// made absolute). The password stays where it was: its variable's name
// or its file go, never its value.
func gnmiArgs(c *cli.Context) ([]string, error) {
	var args []string
	for _, f := range []string{"tls-skip-verify", "gnmi-plaintext"} {
		if c.Bool(f) {
			args = append(args, "--"+f)
		}
	}
	for _, f := range []string{"tls-ca", "gnmi-username", "gnmi-password-env", "gnmi-password-file"} {
		if !c.IsSet(f) {
			continue
		}
		v := c.String(f)
		if f == "tls-ca" || f == "gnmi-password-file" {
			var err error
			if v, err = absFile(v); err != nil {
				return nil, fmt.Errorf("--%s: %w", f, err)
			}
		}
		args = append(args, "--"+f+"="+v) // one argument: a value may start with '-'
	}
	return args, nil
}

// labGNMIFlags choose how an emulated lab serves gNMI ('lab up', 'lab
// serve'): TLS with its own CA unless --gnmi-plaintext; a generated
// password (keys/gnmi-password, named by the lab file) with --gnmi-auth.
var labGNMIFlags = []cli.Flag{
	&cli.BoolFlag{Name: "gnmi-plaintext", Usage: "serve gNMI without TLS (recorded as gnmi_tls.plaintext in the lab file)"},
	&cli.BoolFlag{Name: "gnmi-auth", Usage: "gNMI calls must carry user labctl and the password the lab generates into its keys/gnmi-password"},
}

// labGNMI is the lab's gNMI flags as 'lab serve' arguments.
func labGNMI(c *cli.Context) []string {
	var args []string
	for _, f := range []string{"gnmi-plaintext", "gnmi-auth"} {
		if c.Bool(f) {
			args = append(args, "--"+f)
		}
	}
	return args
}
