package yamlpos

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// bomb is the "billion laughs" document: ten levels of ten aliases each,
// a few hundred bytes that expand to 10^11 nodes.
func bomb() string {
	var b strings.Builder
	b.WriteString("name: a\nx:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return b.String()
}

func TestHostileDocumentsAreRefusedFast(t *testing.T) {
	t.Parallel()
	type doc struct {
		Name string `yaml:"name"`
		X    any    `yaml:"x"`
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"alias bomb", bomb(), "bomb.yaml:8: aliases expand the document past 200000 nodes"},
		{"deep nesting", "name: a\nx: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n", "nesting deeper than 64 levels"},
		{"second document", "name: a\n---\nname: b\n", "bomb.yaml:2: a second YAML document starts here"},
		{"too large", "name: a\nx: \"" + strings.Repeat("y", MaxFileBytes) + "\"\n", "over labctl's limit of 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			var d doc
			_, err := Decode([]byte(tc.data), "bomb.yaml", &d)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("refused after %v: want milliseconds", took)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestAliasesWithinBudgetStillDecode(t *testing.T) {
	t.Parallel()
	var d struct {
		A []int `yaml:"a"`
		B []int `yaml:"b"`
	}
	if _, err := Decode([]byte("a: &x [1, 2, 3]\nb: *x\n"), "ok.yaml", &d); err != nil {
		t.Fatal(err)
	}
	if len(d.B) != 3 || d.B[2] != 3 {
		t.Errorf("b = %v, want the aliased [1 2 3]", d.B)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("name: a\n"))
	f.Add([]byte(bomb()))
	f.Add([]byte("a: &x [1]\nb: *x\n---\nc: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := Parse(data, "f.yaml")
		if err == nil && root == nil {
			t.Fatal("no error and no document")
		}
		if err == nil {
			New("f.yaml", root) // indexing an accepted document stays within the budget
		}
	})
}
