package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// reproArchive is the synthetic archive with 40 more queues on leaf2,
// each non-empty with a fractional time-weighted mean depth, so the mean
// over the queues depends on the order they are summed in.
func reproArchive(t *testing.T) string {
	t.Helper()
	dir := synthRun(t)
	f, err := os.OpenFile(filepath.Join(dir, "telemetry", "queue.lp"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for q := range 40 {
		for k, at := range []int64{3, 29, 70, 97} {
			depth := 1000 + (q*7919+k*104729)%99991
			fmt.Fprintf(f, "queue,lab=lab1,run=r1,device=leaf2,port=%d/0,queue=%d depth_bytes=%di %d\n", 1+q%8, q/8, depth, t0+at*ms)
		}
	}
	return dir
}

const reportHelperEnv = "LABCTL_REPORT_HELPER" // dir, format and output file, tab-separated

// TestReportHelperProcess renders one report for the cross-process check
// (run only as a child of TestReportBytesReproducible).
func TestReportHelperProcess(t *testing.T) {
	args := strings.Split(os.Getenv(reportHelperEnv), "\t")
	if len(args) != 3 {
		t.Skip("helper process only")
	}
	var b bytes.Buffer
	if err := Render(args[0], args[1], &b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(args[2], b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// labctl report --format json|csv is the same bytes for the same archive:
// rendered again in this process (map iteration differs every time) and
// in another process.
func TestReportBytesReproducible(t *testing.T) {
	dir := reproArchive(t)
	for _, format := range []string{"json", "csv"} {
		var first bytes.Buffer
		if err := Render(dir, format, &first); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var again bytes.Buffer
			if err := Render(dir, format, &again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), again.Bytes()) {
				t.Fatalf("%s differs between two renderings:\n%s", format, firstDiff(first.String(), again.String()))
			}
		}
		out := filepath.Join(t.TempDir(), "report."+format)
		cmd := exec.Command(os.Args[0], "-test.run=^TestReportHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), reportHelperEnv+"="+dir+"\t"+format+"\t"+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helper: %v\n%s", err, b)
		}
		other, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), other) {
			t.Fatalf("%s differs between two processes:\n%s", format, firstDiff(first.String(), string(other)))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n%s\n%s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}

// Every *_ns column of the CSV is a whole number (or empty for n/a), and
// no number in the CSV or the JSON is written with an exponent: FCTs of
// 1 ms and more once came out as 1e+06.
func TestReportNanosecondsAreIntegers(t *testing.T) {
	dir := reproArchive(t)
	var b bytes.Buffer
	if err := Render(dir, "csv", &b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	nsCols := 0
	for c, name := range rows[0] {
		if !strings.HasSuffix(name, "_ns") {
			continue
		}
		nsCols++
		for _, r := range rows[1:] {
			if _, err := strconv.ParseInt(r[c], 10, 64); r[c] != "" && err != nil {
				t.Errorf("%s = %q in %s/%s: not an integer", name, r[c], r[1], r[10])
			}
		}
	}
	if nsCols != 9 {
		t.Errorf("%d *_ns columns, want 9 (fct mean, min, 4 percentiles, max, duration, rate span)", nsCols)
	}
	for _, r := range rows[1:] {
		for c, v := range r {
			if _, err := strconv.ParseFloat(v, 64); err == nil && strings.ContainsAny(v, "eE") {
				t.Errorf("%s = %q: exponent", rows[0][c], v)
			}
		}
	}
	b.Reset()
	if err := Render(dir, "json", &b); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	var doc struct {
		Points []struct {
			Name string
			FCT  map[string]json.Number `json:"fct_ns"`
		}
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Points {
		for k, v := range p.FCT {
			if _, err := strconv.ParseInt(string(v), 10, 64); k != "mean" && err != nil {
				t.Errorf("%s fct_ns.%s = %s: not an integer", p.Name, k, v)
			}
			if strings.ContainsAny(string(v), "eE") {
				t.Errorf("%s fct_ns.%s = %s: exponent", p.Name, k, v)
			}
		}
	}
}
