package main

import "github.com/labctl/labctl/emulator/fabric"

// engineCheck checks an emulation.engine name against the twin's engine
// registry, the one the emulated lab builds its engine from.
func engineCheck(name string) error {
	_, err := fabric.Engines().Get(name)
	return err
}
