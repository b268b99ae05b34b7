package main

import (
	"github.com/urfave/cli/v2"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/inventory"
)

// engineCheck checks an emulation.engine name against the twin's engine
// registry, the one the emulated lab builds its engine from.
func engineCheck(name string) error {
	_, err := fabric.Engines().Get(name)
	return err
}

// labRegistries are the registries a lab file's names are checked
// against: the ones provision and the emulator build from.
func labRegistries() inventory.Registries { return emulator.Registries() }

// engineIfSet is --engine when given, else "": the lab file's
// emulation.engine, then the default (packet), decide.
func engineIfSet(c *cli.Context) string {
	if !c.IsSet("engine") {
		return ""
	}
	return c.String("engine")
}
