package agent

import "path"

// Where labctl keeps the agent and a run's files on a host: under the home
// directory of the user it logs in as (relative paths: SSH commands and
// SFTP start there), in a directory only that user can read (HomeDir is
// created 0700), never in a shared /tmp.
const (
	HomeDir    = ".labctl"
	BinaryName = "labctl-agent"
)

// StoreDir holds agent binaries by content: StoreDir/<sha256>/labctl-agent.
const StoreDir = HomeDir + "/agent"

// BinaryPath is where the agent binary whose SHA-256 is sum (hex) lives on
// a host: a version is uploaded once and found by its hash afterwards.
func BinaryPath(sum string) string { return path.Join(StoreDir, sum, BinaryName) }

// RunDir holds a run's schedules and results on a host.
func RunDir(runID string) string { return path.Join(HomeDir, "runs", runID) }
