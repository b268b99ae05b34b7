package provision_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/provision"
)

// FuzzParseQoSProfile: a switch profile of any bytes is refused with an
// error that names the file, or accepted; it never panics, and an accepted
// profile turns into the switches' model.
func FuzzParseQoSProfile(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("pfc_priorities: [3]\npfc_alpha: 0.125\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		slow := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("ParseQoSProfile still running after 10s on %q", b)) })
		defer slow.Stop()
		p, err := provision.ParseQoSProfile(b, "p.yaml")
		if err != nil {
			if !strings.Contains(err.Error(), "p.yaml") {
				t.Fatalf("an error that does not name the file: %v", err)
			}
			return
		}
		_ = p.Want()
	})
}
