package collectors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The registry builds each sink from its options, refuses options a sink
// cannot work without, and answers an unknown name with the known ones.
func TestSinksRegistry(t *testing.T) {
	t.Parallel()
	reg := Sinks()
	if got := strings.Join(reg.Names(), ","); got != "archive,influx" {
		t.Errorf("sinks %s", got)
	}
	dir := t.TempDir()
	k, err := reg.Get(SinkArchive)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.New(SinkOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := Point{Measurement: "port", Tags: map[string]string{"device": "leaf1"}, Fields: map[string]any{"tx_bytes": uint64(7)}, Time: time.Unix(1, 0)}
	if err := s.Write(context.Background(), []Point{p}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "port.lp")); err != nil || !strings.Contains(string(b), "port,device=leaf1 tx_bytes=7i 1000000000") {
		t.Errorf("archive sink wrote %q, %v", b, err)
	}
	for name, o := range map[string]SinkOptions{SinkArchive: {}, SinkInflux: {Dir: dir}} {
		k, _ := reg.Get(name)
		if s, err := k.New(o); err == nil {
			s.Close(context.Background())
			t.Errorf("%s built from %+v", name, o)
		}
	}
	if _, err := reg.Get("influxdb"); err == nil || !strings.Contains(err.Error(), `unknown telemetry sink (did you mean "influx"?); known: archive, influx`) {
		t.Errorf("unknown sink: %v", err)
	}
}
