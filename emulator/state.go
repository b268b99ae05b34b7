package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// State describes a lab started with `labctl lab up`, so that later commands
// (run, status, down) can find and use it.
type State struct {
	Name string `json:"name"`
	// Host, PID, PIDStart and Cmdline name the lab's process (the one
	// 'lab up' started), so that a recycled pid is never taken for it:
	// cmd/labctl judges and signals it through lease.Process only.
	Host     string    `json:"host,omitempty"`
	PID      int       `json:"pid"`
	PIDStart uint64    `json:"pid_start,omitempty"`
	Cmdline  string    `json:"cmdline,omitempty"`
	Dir      string    `json:"dir"`
	LabFile  string    `json:"lab_file"` // the exported inventory
	Started  time.Time `json:"started"`
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// StateDir is where a named lab keeps its state under home (~/.labctl).
func StateDir(home, name string) string {
	return filepath.Join(home, "labs", unsafeChars.ReplaceAllString(name, "_"))
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// SaveState records a running lab.
func SaveState(st State) error {
	b, _ := json.MarshalIndent(st, "", "  ")
	tmp := statePath(st.Dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("lab %s: %w", st.Name, err)
	}
	return os.Rename(tmp, statePath(st.Dir))
}

// RemoveState forgets a lab.
func RemoveState(dir string) error {
	err := os.Remove(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// LoadState reads a lab's state; ok is false if no lab of that name was
// started.
func LoadState(home, name string) (st State, ok bool, err error) {
	b, err := os.ReadFile(statePath(StateDir(home, name)))
	if errors.Is(err, os.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, false, fmt.Errorf("lab %s: state file: %w", name, err)
	}
	return st, true, nil
}

// ListStates lists every lab that has a state file under home.
func ListStates(home string) ([]State, error) {
	files, _ := filepath.Glob(filepath.Join(home, "labs", "*", "state.json"))
	var out []State
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var st State
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, st)
	}
	return out, nil
}
