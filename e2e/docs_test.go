package e2e_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestArchitectureMapsEveryPackage: docs/architecture.md has a line in its
// package map for every package `go list ./...` shows, and none for a
// package that no longer exists.
func TestArchitectureMapsEveryPackage(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Package map\n")
	if !ok {
		t.Fatal("docs/architecture.md has no section \"## Package map\"")
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	mapped := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(rest, "` |"); ok {
				mapped[name] = true
			}
		}
	}
	const module = "github.com/labctl/labctl/"
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module)
		if !mapped[rel] {
			t.Errorf("docs/architecture.md: no line for package %s in the package map (| `%s` | what it is for |)", rel, rel)
		}
		delete(mapped, rel)
	}
	for name := range mapped {
		if _, err := os.Stat("../" + name); err != nil {
			t.Errorf("docs/architecture.md maps %s, which does not exist", name)
		}
	}
}
