package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := scenarios.Load("papers/flb-incast"); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(t.TempDir(), "flb-incast-quick.yaml")
	if err := os.WriteFile(sc, []byte(`name: flb-incast-quick
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
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarios.Runner{Labs: &emulatedLabs{t: t}, OutDir: t.TempDir(), AgentPath: fakeAgent(t), PointTimeout: time.Minute}
	out, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
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
	md, err := os.ReadFile(filepath.Join(out.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Incast goodput (Gb/s) vs senders", "N=4", "N=8"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
