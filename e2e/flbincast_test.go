package e2e_test

import (
	"testing"
	"time"

	"github.com/labctl/labctl/scenarios"
)

// TestFLBIncastQuickReportsGoodput: papers/flb-incast at small N (4 and
// 8 senders spread over the leaves of a 2 x 3 leaf-spine at 40 Gb/s,
// 2 MB in all), with its +DCQCN and FLB+RC schemes, runs every point, and
// the report gives each point's goodput, above 0 and at most the
// receiver's 40 Gb/s link, in the goodput-vs-senders table.
func TestFLBIncastQuickReportsGoodput(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	if _, err := scenarios.Load("papers/flb-incast"); err != nil {
		t.Fatal(err)
	}
	out := runEmulatedYAML(t, `name: flb-incast-quick
lab: leafspine:2x3:4@40
traffic:
  - {name: incast, pattern: incast, senders: 4, receiver: h12, spread: leaves, bytes: 500KB}
matrix:
  - path: emulation
    name: scheme
    values:
      - {lb: conga, rnic: {dcqcn: on}}
      - {lb: flb, host_lb: flbrc, rnic: {dcqcn: off}}
    labels: [conga-dcqcn, flb-rc]
  - path: traffic[0]
    name: n
    values:
      - {name: incast, pattern: incast, senders: 4, receiver: h12, spread: leaves, bytes: 500KB}
      - {name: incast, pattern: incast, senders: 8, receiver: h12, spread: leaves, bytes: 250KB}
    labels: ["4", "8"]
`, time.Minute)
	if len(out.Summary.Points) != 4 {
		t.Fatalf("%d points, want 2 schemes x 2 N", len(out.Summary.Points))
	}
	for _, p := range out.Summary.Points {
		if p.Status != "ok" || p.Failed != 0 || p.Senders != p.Flows {
			t.Fatalf("point %s: %s, %d flows (%d failed), %d senders", p.Name, p.Status, p.Flows, p.Failed, p.Senders)
		}
		if p.GoodputGbps <= 0 || p.GoodputGbps > p.LinkGbps || p.LinkGbps != 40 {
			t.Errorf("point %s: goodput %.2f Gb/s, want in (0, %g]", p.Name, p.GoodputGbps, p.LinkGbps)
		}
		t.Logf("%s: goodput %.2f Gb/s", p.Name, p.GoodputGbps)
	}
	checkReportHas(t, out.Dir, "Incast goodput (Gb/s) vs senders", "N=4", "N=8")
}
