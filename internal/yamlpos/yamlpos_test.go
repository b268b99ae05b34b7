package yamlpos

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const doc = `name: x
traffic:
  - pattern: incast
    bytes: 1MiB
  - pattern: allreduce
    hosts: 8
`

func TestLines(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	ix := New("s.yaml", &root)
	for path, want := range map[string]int{
		"name": 1, "traffic": 2, "traffic[0].bytes": 4, "traffic[1].hosts": 6,
		"traffic[1].missing": 5, // falls back to the nearest parent
		"nowhere":            0,
	} {
		if got := ix.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	var ps Problems
	ix.Add(&ps, "traffic[1].hosts", "must be at least %d", 9)
	ix.Add(&ps, "name", "bad")
	err := ps.Err()
	if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:1: name: bad\ns.yaml:6: traffic[1].hosts: must be at least 9") {
		t.Fatalf("got %v", err)
	}
	if (Problems{}).Err() != nil {
		t.Fatal("empty problems must be nil error")
	}
}
