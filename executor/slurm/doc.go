// Package slurm runs a scenario matrix's points as one Slurm job array:
// it submits the missing points of a planned run (sbatch --array), follows
// the tasks with scontrol (clusters without accounting answer nothing to
// sacct), resubmits the points left without a result up to a number of
// retries, and cancels the array (scancel) when the controller is stopped.
// Each task runs the labctl worker, which writes the point's result into
// the run directory on storage the cluster shares (scenarios.RunPoint).
//
// Imports within labctl: only archive, scenarios.
package slurm
