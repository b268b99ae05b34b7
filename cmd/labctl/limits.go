package main

import (
	"fmt"
	"syscall"

	"github.com/labctl/labctl/inventory"
)

// Open files an emulated lab costs the process that serves it and runs
// against it (`labctl run` on a generated lab), measured on fattree:8 (128
// hosts, 80 switches: 925 descriptors during the traffic stage): per host
// its SSH listener, both ends of labctl's connection and the agent's
// result file; per switch its SSH and gNMI listeners and both ends of
// labctl's gNMI connection; and the process's own (archive, logs).
const (
	filesPerHost   = 4
	filesPerSwitch = 4
	filesBase      = 128
)

// labFiles is about how many files an emulated lab needs open at once.
func labFiles(lab *inventory.Lab) int {
	return filesBase + filesPerHost*len(lab.Hosts) + filesPerSwitch*len(lab.Switches)
}

// ensureOpenFiles makes sure this process may hold the files lab needs
// (labFiles): it raises the soft RLIMIT_NOFILE up to the hard limit when
// that suffices, and otherwise fails naming the limit and how to raise it.
func ensureOpenFiles(lab *inventory.Lab) error {
	need := labFiles(lab)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read the open-files limit (RLIMIT_NOFILE): %w", err)
	}
	raise, err := openFilesPlan(lab, need, lim)
	if err != nil || raise == 0 {
		return err
	}
	lim.Cur = raise
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("lab %s needs about %d open files: raise the soft limit (RLIMIT_NOFILE) from %d to %d: %w",
			lab.Name, need, lim.Cur, raise, err)
	}
	return nil
}

// openFilesPlan says what soft limit to set for need files under lim (0:
// none, the current one suffices), or why lim cannot hold them.
func openFilesPlan(lab *inventory.Lab, need int, lim syscall.Rlimit) (uint64, error) {
	n := uint64(need)
	switch {
	case lim.Cur >= n:
		return 0, nil
	case lim.Max >= n:
		return lim.Max, nil
	}
	return 0, fmt.Errorf("lab %s (%d hosts, %d switches) needs about %d open files, but this process may open only %d "+
		"(RLIMIT_NOFILE: soft %d, hard %d); raise the limit in the shell that runs labctl, e.g. `ulimit -n %d` "+
		"(above the hard limit as root, or with a nofile line in /etc/security/limits.conf)",
		lab.Name, len(lab.Hosts), len(lab.Switches), need, lim.Max, lim.Cur, lim.Max, roundUp(n))
}

// roundUp is n rounded up to a multiple of 1024, a limit to suggest.
func roundUp(n uint64) uint64 { return (n + 1023) / 1024 * 1024 }
