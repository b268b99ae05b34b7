package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/collectors"
)

// gapMetas keeps every gap but those of unreadable values, which become
// one entry per device, target and reason standing for all of them (its
// span from the earliest to the latest, its keys named, its counts
// summed); a lone one stays as it is; keptGaps counts what the entries
// stand for.
func TestGapMetasSummariseUnreadableValues(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	bad := func(dev, port string, us int, reason string) collectors.Gap {
		return collectors.Gap{Device: dev, Target: collectors.CountersDB, Path: "COUNTERS_DB:/COUNTERS/" + port, Since: at(us), Until: at(us + 100),
			Unreadable: 2, UnreadableSamples: 2, Reason: reason}
	}
	na, neg := `... the first SAI_PORT_STAT_PFC_3_RX_PKTS = "N/A"`, `... the first SAI_PORT_STAT_PFC_4_RX_PKTS = "-1"`
	broken := collectors.Gap{Device: "leaf2", Target: "leaf2", Path: "/interfaces", Since: at(0), Until: at(500), Interval: 100 * time.Microsecond,
		Reason: "stream broken: EOF"}
	gaps := []collectors.Gap{
		bad("leaf1", "Ethernet0", 200, na), broken, bad("leaf1", "Ethernet4", 100, na), bad("leaf1", "Ethernet0", 300, na),
		bad("leaf1", "Ethernet8", 300, na), bad("leaf1", "Ethernet12", 300, na), bad("leaf1", "Ethernet0", 300, neg),
	}
	metas := gapMetas(gaps)
	if len(metas) != 3 || keptGaps(metas) != len(gaps) {
		t.Fatalf("%d entries standing for %d gaps, want 3 for %d: %+v", len(metas), keptGaps(metas), len(gaps), metas)
	}
	if m := metas[0]; m.Device != "leaf2" || m.Gaps != 0 || m.Missed != 4 || m.Warning != broken.String() {
		t.Errorf("the broken stream's entry %+v", m)
	}
	m := metas[1]
	if m.Device != "leaf1" || m.Gaps != 5 || m.Unreadable != 10 || !m.Since.Equal(at(100)) || !m.Until.Equal(at(400)) || m.Reason != na {
		t.Errorf("the N/A entry %+v", m)
	}
	for _, want := range []string{"device leaf1 target COUNTERS_DB: 10 samples of 4 keys",
		"(COUNTERS_DB:/COUNTERS/Ethernet0, COUNTERS_DB:/COUNTERS/Ethernet4, COUNTERS_DB:/COUNTERS/Ethernet8 and 1 more)", "without 10 of their values", na} {
		if !strings.Contains(m.Warning, want) {
			t.Errorf("warning %q lacks %q", m.Warning, want)
		}
	}
	if lone := metas[2]; lone.Gaps != 0 || lone.Unreadable != 2 || lone.Warning != gaps[6].String() {
		t.Errorf("the lone unreadable gap's entry %+v", lone)
	}
}
