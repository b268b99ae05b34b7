package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// openUpLab resolves --lab for commands whose changes must outlast them
// (provision, image): a running lab by the name it was started with, the
// lab file it exported, or a hardware lab file. Unlike openLab it never
// starts an emulated lab: one started for a single command would take the
// settings it was given down with it when the command exits.
func openUpLab(name string) (*inventory.Lab, error) {
	st, up, err := runningLab(name)
	if err != nil {
		return nil, err
	}
	if up {
		return inventory.Load(st.LabFile)
	}
	lab, err := inventory.ResolveWith(name, qosdriver.Builtin())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exitError{2, fmt.Errorf("lab %s: not a running lab (see 'labctl lab list'), a lab file or a topology such as leafspine:2x4:8@100", name)}
	}
	if err != nil {
		return nil, err
	}
	if lab.Emulated {
		return nil, exitError{2, fmt.Errorf("lab %s is not up: start it with 'labctl lab up %s' (an emulated lab keeps settings only while it is up)", name, name)}
	}
	return lab, nil
}

// runningLab is the running emulated lab that name means: the name it was
// started with, or the lab file it exported. Every command that looks a
// lab up (to use it, to lease it, to check a scenario against it) asks
// here, so that all of them mean the same lab by the same name.
func runningLab(name string) (emulator.State, bool, error) {
	st, ok, err := emulator.LoadState(home(), name)
	if err != nil {
		return st, false, err
	}
	if ok && labUp(st) {
		return st, true, nil
	}
	st, ok = exportedBy(name)
	return st, ok, nil
}

// exportedBy finds the running lab whose exported lab file path is.
func exportedBy(path string) (emulator.State, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return emulator.State{}, false
	}
	sts, _ := emulator.ListStates(home())
	for _, st := range sts {
		if f, err := filepath.Abs(st.LabFile); err == nil && f == abs && labUp(st) {
			return st, true
		}
	}
	return emulator.State{}, false
}
