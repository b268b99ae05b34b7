package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// labUpResult is what lab up --format json prints: the lab that serves,
// where its exported lab file is and how many endpoints it serves.
type labUpResult struct {
	Lab       string `json:"lab"`
	LabFile   string `json:"lab_file"`
	PID       int    `json:"pid"`
	Endpoints int    `json:"endpoints"`
}

// printLabUp prints a lab that came up.
func printLabUp(st emulator.State, format string) error {
	r := labUpResult{Lab: st.Name, LabFile: st.LabFile, PID: st.PID}
	if lab, err := inventory.Load(st.LabFile); err == nil {
		r.Endpoints = len(labEndpoints(lab))
	} else if format != formatTable { // the sentence names no count; a script must not read 0
		return fmt.Errorf("lab %s is up, but its lab file: %w", st.Name, err)
	}
	return printAction(format, r,
		fmt.Sprintf("lab %s up (pid %d)\nlab file: %s\nuse it: labctl run SCENARIO --lab %s", r.Lab, r.PID, r.LabFile, r.Lab),
		[]string{"LAB", "PID", "ENDPOINTS", "LAB FILE"}, []string{r.Lab, strconv.Itoa(r.PID), strconv.Itoa(r.Endpoints), r.LabFile})
}

// labDown is one lab lab down stopped: WasRunning false when its process
// had already gone (Note says why) and only its state was cleared.
type labDown struct {
	Lab        string `json:"lab"`
	WasRunning bool   `json:"was_running"`
	Note       string `json:"note,omitempty"`
}

// printDowns prints the labs lab down stopped.
func printDowns(format string, downs []labDown) error {
	return printResult(os.Stdout, format, downs, func() table {
		t := table{Head: []string{"LAB", "WAS RUNNING", "NOTE"}}
		for _, d := range downs {
			t.add(d.Lab, strconv.FormatBool(d.WasRunning), d.Note)
		}
		return t
	}, func(w io.Writer) error {
		for _, d := range downs {
			if !d.WasRunning {
				if _, err := fmt.Fprintf(w, "lab %s was not running (%s): clearing its state\n", d.Lab, d.Note); err != nil {
					return err
				}
			}
			if _, err := fmt.Fprintf(w, "lab %s down\n", d.Lab); err != nil {
				return err
			}
		}
		return nil
	})
}
