package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/labctl/labctl/perftest"
)

// TestOlderResultFile: a result an older labctl wrote (testdata/README.md)
// reads as the Decoder-based reader read it, each record's output parses
// to the record's row, and writing its content again gives the same bytes.
func TestOlderResultFile(t *testing.T) {
	t.Parallel()
	const file = "testdata/h4.result.json.gz"
	f, err := OpenResult(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	readBoth(t, raw, true, false)
	readBoth(t, raw, false, false)

	var whole Result
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	if len(whole.Records) < 50 || len(whole.Servers) < 50 {
		t.Fatalf("%d records, %d server runs: not the sample described", len(whole.Records), len(whole.Servers))
	}
	n := 0
	if _, err := ReadResult(bytes.NewReader(raw), func(_ *Result, rec perftest.FlowRecord) error {
		rep, err := perftest.ParseBW(rec.Output)
		if err != nil || len(rep.Rows) != 1 || rep.Rows[0].Bytes != rec.Result.Bytes || rep.Rows[0].Iterations != rec.Result.Iterations {
			t.Errorf("flow %d: output parses to %+v (%v), record's row %+v", rec.FlowID, rep, err, rec.Result)
		}
		n++
		return nil
	}); err != nil || n != len(whole.Records) {
		t.Fatalf("%d of %d records read: %v", n, len(whole.Records), err)
	}

	var again bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&again, gzip.BestSpeed)
	w := NewResultWriter(zw, whole)
	for _, rec := range whole.Records {
		w.RecordOutput(rec, []byte(rec.Output))
	}
	for _, sr := range whole.Servers {
		w.Server(sr)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	gz, _ := os.ReadFile(file)
	if !bytes.Equal(again.Bytes(), gz) {
		t.Errorf("rewritten gzip differs from the older writer's (%d bytes, was %d)", again.Len(), len(gz))
	}
	zr, _ := gzip.NewReader(&again)
	if rewritten, _ := io.ReadAll(zr); !bytes.Equal(rewritten, raw) {
		t.Errorf("rewritten JSON differs from the older writer's (%d bytes, was %d)", len(rewritten), len(raw))
	}
}
