// Package testslurm starts a one-node Slurm cluster on this machine for
// tests: munged, slurmctld and slurmd in the foreground, with a generated
// slurm.conf (loopback, no accounting, proctrack/linuxproc, task/none) in
// a temporary directory, stopped when the test ends. It needs Debian's
// slurm-wlm and munge (scripts/test.sh installs them) and root (munged
// runs as the munge user, slurmd as root); without them tests skip and
// say why.
//
// Imports within labctl: none.
package testslurm
