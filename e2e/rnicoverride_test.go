package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/connectx"
)

// TestRNICOverrideTurnsDCQCNOffInTheTwin: a matrix over emulation.rnic
// runs each variant on hosts that hold its DCQCN setting: the variant
// provisions the derived RNIC profile (archived under provision/, read
// back clean), and with DCQCN off the receivers' notification points send
// no CNP under an incast that the variant with DCQCN on answers with CNPs.
func TestRNICOverrideTurnsDCQCNOffInTheTwin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	out := runEmulatedYAML(t, `name: dcqcn-override
lab: leafspine:1x2:5@100
traffic:
  - {name: inc, pattern: incast, senders: 8, receiver: h1, bytes: 1MiB}
matrix:
  - path: emulation
    name: cc
    values:
      - {engine: packet, rnic: {dcqcn: off}}
      - {engine: packet, rnic: {dcqcn: on}}
    labels: [off, on]
`, time.Minute)
	for _, cc := range []string{"off", "on"} {
		pdir := filepath.Join(out.Dir, "provision", "cc="+cc)
		p, err := connectx.LoadProfile(filepath.Join(pdir, "rnic-profile.yaml"))
		if err != nil {
			t.Fatalf("dcqcn %s: the archive lacks the derived RNIC profile: %v", cc, err)
		}
		if on := len(p.ECN.Priorities) > 0; on != (cc == "on") {
			t.Errorf("dcqcn %s: archived profile enables priorities %v", cc, p.ECN.Priorities)
		}
		b, err := os.ReadFile(filepath.Join(pdir, "rnic-readback.json"))
		if err != nil || strings.TrimSpace(string(b)) != "null" && strings.TrimSpace(string(b)) != "[]" {
			t.Errorf("dcqcn %s: RNICs read back %s (%v)", cc, b, err)
		}
	}
	cnps := map[string]uint64{}
	for _, p := range out.Summary.Points {
		if p.Status != "ok" || p.Flows != 8 || p.Failed != 0 {
			t.Fatalf("point %s: %s, %d flows, %d failed", p.Name, p.Status, p.Flows, p.Failed)
		}
		if p.ECNMarked == 0 {
			t.Errorf("point %s: no ECN marks; the incast must congest the receiver's port", p.Name)
		}
		cnps[p.Name] = p.RNIC["np_cnp_sent"]
	}
	t.Logf("CNPs sent by point: %v", cnps)
	if cnps["inc/cc=off"] != 0 || cnps["inc/cc=on"] == 0 {
		t.Errorf("CNPs sent by point %v: want none with DCQCN off and some with it on", cnps)
	}
}
