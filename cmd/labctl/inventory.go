package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/inventory"
)

func inventoryCommand() *cli.Command {
	// resolve loads and validates the one LAB argument.
	resolve := func(c *cli.Context) (string, *inventory.Lab, error) {
		if c.NArg() != 1 {
			return "", nil, exitError{2, fmt.Errorf("%s needs exactly one LAB (a lab file or a generated topology like leafspine:2x4:8@100)", c.Command.Name)}
		}
		lab, err := inventory.ResolveAgainst(c.Args().First(), labRegistries())
		return c.Args().First(), lab, err
	}
	return &cli.Command{
		Name:  "inventory",
		Usage: "check and show lab inventories",
		Subcommands: []*cli.Command{
			{
				Name: "validate", Usage: "report every problem in a lab file, with file:line and field", ArgsUsage: "LAB",
				Flags: []cli.Flag{newFormatFlag(formatTable)},
				Action: func(c *cli.Context) error {
					o, err := parseOptions(c)
					if err != nil {
						return err
					}
					name, lab, err := resolve(c)
					var ps inventory.Problems
					if errors.As(err, &ps) {
						err = fmt.Errorf("%s: %d problems:\n%w", name, len(ps), err)
					}
					if err != nil && (o.Format == formatTable || len(ps) == 0) {
						return err
					}
					if perr := printValidation(os.Stdout, o.Format, name, lab, ps); perr != nil {
						return perr
					}
					return err
				},
			},
			{
				Name: "ansible", Usage: "print the lab as an Ansible inventory (see ansible/README.md)", ArgsUsage: "LAB",
				Description: `LAB is a hardware lab file, or an emulated lab that is up (the name it was
started with or the lab file it exported): the inventory holds each device's
SSH address and port, user, key file or password lookup, and the lab's
known_hosts, so Ansible reaches the same endpoints labctl does. An emulated
lab that is not up has no endpoints: start it with 'labctl lab up' first.

Groups: rdma_hosts, and switches with one child group per role (leaves,
aggs, spines). --format json writes the same inventory as JSON (Ansible reads
it too; jq picks from it); md lists each device with its group and SSH
address.

  labctl inventory ansible lab.yaml > hosts.yml
  labctl lab up leafspine:1x2:2 && labctl inventory ansible leafspine:1x2:2 > hosts.yml
  labctl inventory ansible lab.yaml --format json | jq '.all.children.rdma_hosts.hosts | keys'`,
				Flags: []cli.Flag{newFormatFlag(formatTable)},
				Action: func(c *cli.Context) error {
					format, err := checkFormat(c)
					if err != nil {
						return err
					}
					if c.NArg() != 1 {
						return exitError{2, fmt.Errorf("%s needs exactly one LAB (a lab file or a running lab)", c.Command.Name)}
					}
					// a running lab's endpoints, never a throw-away lab's
					lab, err := openUpLab(c.Args().First())
					if err != nil {
						return err
					}
					return printAnsible(os.Stdout, format, lab)
				},
			},
			{
				Name: "show", Usage: "print a lab's devices, RNICs and links", ArgsUsage: "LAB",
				Flags: []cli.Flag{newFormatFlag(formatTable), jsonAlias},
				Action: func(c *cli.Context) error {
					o, err := parseOptions(c)
					if err != nil {
						return err
					}
					_, lab, err := resolve(c)
					if err != nil {
						return err
					}
					return printResult(os.Stdout, o.Format, lab, func() table { return deviceTable(lab) },
						func(w io.Writer) error { return inventory.WriteSummary(w, lab) })
				},
			},
		},
	}
}

// validation is what inventory validate says of a lab.
type validation struct {
	Lab      string   `json:"lab"`
	OK       bool     `json:"ok"`
	Switches int      `json:"switches"`
	Hosts    int      `json:"hosts"`
	Links    int      `json:"links"`
	Problems []string `json:"problems,omitempty"`
}

// printValidation prints a lab's validation: ok with its size, or its
// problems (file:line: field: message), one a row.
func printValidation(w io.Writer, format, name string, lab *inventory.Lab, ps inventory.Problems) error {
	v := validation{Lab: name, OK: len(ps) == 0}
	for _, p := range ps {
		v.Problems = append(v.Problems, p.String())
	}
	if lab != nil && v.OK {
		v.Switches, v.Hosts, v.Links = len(lab.Switches), len(lab.Hosts), len(lab.Links)
	}
	return printResult(w, format, v, func() table {
		t := table{Head: []string{"LAB", "OK", "SWITCHES", "HOSTS", "LINKS"}}
		t.add(v.Lab, strconv.FormatBool(v.OK), strconv.Itoa(v.Switches), strconv.Itoa(v.Hosts), strconv.Itoa(v.Links))
		for _, p := range v.Problems {
			t.Foot = append(t.Foot, "problem: "+p)
		}
		return t
	}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: ok (%d switches, %d hosts, %d links)\n", name, v.Switches, v.Hosts, v.Links)
		return err
	})
}

// deviceTable is a lab's devices, one row per switch and per host RNIC.
func deviceTable(lab *inventory.Lab) table {
	t := table{Head: []string{"DEVICE", "KIND", "ROLE", "MODEL", "RNIC", "IP", "SSH", "GNMI"}}
	for _, s := range lab.Switches {
		t.add(s.Name, "switch", s.Role, orDash(s.Model), "-", "-", orDash(s.Mgmt.SSH), orDash(s.Mgmt.GNMI))
	}
	for _, h := range lab.Hosts {
		for _, r := range h.RNICs {
			t.add(h.Name, "host", "-", "-", r.Device, r.IP, orDash(h.Mgmt.SSH), "-")
		}
	}
	t.Foot = []string{fmt.Sprintf("lab %s: %d switches, %d hosts, %d links", lab.Name, len(lab.Switches), len(lab.Hosts), len(lab.Links))}
	return t
}

// printAnsible prints a lab's Ansible inventory: YAML (table, the form
// Ansible's docs use), JSON, or the devices as a Markdown table.
func printAnsible(w io.Writer, format string, lab *inventory.Lab) error {
	inv, err := inventory.Ansible(lab)
	if err != nil {
		return err
	}
	return printResult(w, format, inv, func() table {
		t := table{Head: []string{"DEVICE", "GROUP", "SSH"}}
		for _, h := range lab.Hosts {
			t.add(h.Name, "rdma_hosts", h.Mgmt.SSH)
		}
		for _, s := range lab.Switches {
			t.add(s.Name, "switches ("+s.Role+")", s.Mgmt.SSH)
		}
		return t
	}, func(w io.Writer) error { return inventory.WriteAnsible(w, lab) })
}
