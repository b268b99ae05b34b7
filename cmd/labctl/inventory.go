package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

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
				Action: func(c *cli.Context) error {
					name, lab, err := resolve(c)
					var ps inventory.Problems
					if errors.As(err, &ps) {
						return fmt.Errorf("%s: %d problems:\n%w", name, len(ps), err)
					}
					if err != nil {
						return err
					}
					fmt.Printf("%s: ok (%d switches, %d hosts, %d links)\n", name, len(lab.Switches), len(lab.Hosts), len(lab.Links))
					return nil
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
aggs, spines).

  labctl inventory ansible lab.yaml > hosts.yml
  labctl lab up leafspine:1x2:2 && labctl inventory ansible leafspine:1x2:2 > hosts.yml`,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return exitError{2, fmt.Errorf("%s needs exactly one LAB (a lab file or a running lab)", c.Command.Name)}
					}
					// a running lab's endpoints, never a throw-away lab's
					lab, err := openUpLab(c.Args().First())
					if err != nil {
						return err
					}
					return inventory.WriteAnsible(os.Stdout, lab)
				},
			},
			{
				Name: "show", Usage: "print a lab's devices, RNICs and links", ArgsUsage: "LAB",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
				Action: func(c *cli.Context) error {
					_, lab, err := resolve(c)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						enc := json.NewEncoder(os.Stdout)
						enc.SetIndent("", "  ")
						return enc.Encode(lab)
					}
					return inventory.WriteSummary(os.Stdout, lab)
				},
			},
		},
	}
}
