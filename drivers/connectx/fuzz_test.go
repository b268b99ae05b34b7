package connectx

import (
	"os"
	"strings"
	"testing"
)

// FuzzParseProfile: an RNIC profile of any bytes is refused with an error
// naming the file, or accepted; it never panics.
func FuzzParseProfile(f *testing.F) {
	b, err := os.ReadFile("testdata/rnic_profile.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("trust: pcp\npfc_priorities: [3, 9]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ParseProfile(b, "r.yaml"); err != nil && !strings.Contains(err.Error(), "r.yaml") {
			t.Fatalf("an error that does not name the file: %v", err)
		}
	})
}

// FuzzParseRoCESettings: what cma_roce_mode, cma_roce_tos and mlnx_qos's
// PFC line print (seeds as the tools print them, hardware-surfaces 2.2,
// 2.4): read or refused, never a panic, never a value out of range.
func FuzzParseRoCESettings(f *testing.F) {
	f.Add("RoCE v2\n", "106\n", "0,0,0,1,0,0,0,0")
	f.Add("IB/RoCE v1\n", "0\n", "1,1,1,1,1,1,1,1")
	f.Fuzz(func(t *testing.T, mode, tos, pfc string) {
		if m, err := ParseRoCEMode(mode); err == nil && m != 1 && m != 2 {
			t.Fatalf("RoCE mode %d from %q", m, mode)
		}
		if v, err := ParseRoCETOS(tos); err == nil && (v < 0 || v > 255) {
			t.Fatalf("ToS %d from %q", v, tos)
		}
		_, _ = ParsePFCList(pfc)
	})
}

// FuzzParseCat: the output of `cat` over several sysfs files (values on
// stdout, the absent ones named on stderr): read or refused, never a panic.
func FuzzParseCat(f *testing.F) {
	f.Add("3\n0\n", "")
	f.Add("3\n", "cat: /sys/class/net/ens1f0/ecn/roce_np/enable/1: No such file or directory\n")
	f.Fuzz(func(t *testing.T, stdout, stderr string) {
		files := []string{"/sys/class/net/ens1f0/ecn/roce_np/enable/3", "/sys/class/net/ens1f0/ecn/roce_np/enable/1"}
		m, err := parseCat("ecn", files, stdout, stderr)
		if err == nil && len(m) > len(files) {
			t.Fatalf("%d values for %d files", len(m), len(files))
		}
	})
}
