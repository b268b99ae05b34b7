package testslurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArrayRuns: the cluster runs a 4-task array to its end and every
// task writes its index.
func TestArrayRuns(t *testing.T) {
	c := Start(t, 2)
	dir := t.TempDir()
	script := filepath.Join(dir, "t.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho $SLURM_ARRAY_TASK_ID > "+dir+"/out.$SLURM_ARRAY_TASK_ID\n"), 0o755)
	out, err := c.Command("sbatch", "--parsable", "--array=0-3", "--output=/dev/null", script).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, out)
	}
	for i := 0; i < 4; i++ {
		f := filepath.Join(dir, "out."+string(rune('0'+i)))
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == string(rune('0'+i)) {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("task %d wrote nothing in 30s", i)
			}
		}
	}
}
