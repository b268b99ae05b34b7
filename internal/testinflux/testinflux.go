// Package testinflux gives tests a real InfluxDB 1.8: the one the test
// command started (LABCTL_INFLUX_URL), or an influxd started for the test
// from LABCTL_INFLUXD, ~/.cache/labctl/bin/influxd or PATH.
//
// Only tests import it.
//
// Imports within labctl: none.
package testinflux

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
)

//go:embed influxdb.conf.tmpl
var confTmpl string

// Server is a database on a real influxd.
type Server struct {
	URL, Bucket, Org, Token string
}

var seq atomic.Int64

// Start returns a fresh database on a real influxd.
func Start(t testing.TB) *Server {
	t.Helper()
	base := os.Getenv("LABCTL_INFLUX_URL")
	if base == "" {
		base = startInfluxd(t)
	}
	return createDB(t, base)
}

// createDB creates a database and returns only once influxd lists it.
// InfluxQL answers 200 even when a statement fails (the error is in the
// body), so the answer is read, and the database is looked for with SHOW
// DATABASES, retrying for a few seconds on a loaded machine; a failure names
// influxd's own words.
func createDB(t testing.TB, base string) *Server {
	t.Helper()
	db := fmt.Sprintf("labctl_test_%d_%d", os.Getpid(), seq.Add(1))
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := influxQL(base, "CREATE DATABASE "+db); err != nil {
			last = err.Error()
			continue
		}
		names, err := influxQL(base, "SHOW DATABASES")
		if err != nil {
			last = err.Error()
			continue
		}
		if slices.Contains(names, db) {
			return &Server{URL: base, Bucket: db, Org: "", Token: ""}
		}
		last = fmt.Sprintf("SHOW DATABASES does not list %s after CREATE DATABASE", db)
	}
	t.Fatalf("influxd %s: database %s: %s", base, db, last)
	return nil
}

// influxQL runs one statement and returns the first column of its values;
// an error carries the HTTP status or the statement's error.
func influxQL(base, q string) ([]string, error) {
	resp, err := http.PostForm(base+"/query", url.Values{"q": {q}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ans struct {
		Error   string `json:"error"`
		Results []struct {
			Error  string `json:"error"`
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s (%v)", q, resp.Status, err)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("%s: %s", q, ans.Error)
	}
	var col []string
	for _, r := range ans.Results {
		if r.Error != "" {
			return nil, fmt.Errorf("%s: %s", q, r.Error)
		}
		for _, s := range r.Series {
			for _, v := range s.Values {
				if len(v) > 0 {
					col = append(col, fmt.Sprint(v[0]))
				}
			}
		}
	}
	return col, nil
}

func findInfluxd() string {
	if p := os.Getenv("LABCTL_INFLUXD"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if h, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(h, ".cache")
		}
	}
	if p := filepath.Join(cache, "labctl", "bin", "influxd"); fileExists(p) {
		return p
	}
	p, _ := exec.LookPath("influxd")
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startInfluxd(t testing.TB) string {
	return StartProcess(t).base
}

// Process is an influxd of the test's own, which the test may kill,
// restart and stop (SIGSTOP) to play an InfluxDB outage.
type Process struct {
	t         testing.TB
	bin, conf string
	dir, base string
	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
}

// StartProcess starts an influxd for the test alone (never the shared one
// of LABCTL_INFLUX_URL), stopped when the test ends.
func StartProcess(t testing.TB) *Process {
	t.Helper()
	bin := findInfluxd()
	if bin == "" {
		msg := "no influxd: run ./scripts/test.sh, which installs InfluxDB 1.8.10 (or set LABCTL_INFLUXD)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	// A port found free may be taken by another process before influxd
	// binds it (the suite runs many servers at once): try fresh ports.
	var p *Process
	for attempt := 1; ; attempt++ {
		http, rpc := freePort(t), freePort(t)
		conf := strings.NewReplacer("@DIR@", dir, "@HTTP@", fmt.Sprint(http), "@RPC@", fmt.Sprint(rpc)).Replace(confTmpl)
		cf := filepath.Join(dir, "influxdb.conf")
		if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		p = &Process{t: t, bin: bin, conf: cf, dir: dir, base: fmt.Sprintf("http://127.0.0.1:%d", http)}
		log, ok := p.tryStart()
		if ok {
			break
		}
		if attempt == 5 || !strings.Contains(log, "address already in use") {
			t.Fatalf("influxd did not start:\n%s", log)
		}
	}
	t.Cleanup(func() { p.Resume(); p.Kill() })
	return p
}

func (p *Process) start() {
	p.t.Helper()
	if log, ok := p.tryStart(); !ok {
		p.t.Fatalf("influxd did not start:\n%s", log)
	}
}

// tryStart starts influxd and waits for it to answer; on failure it
// returns influxd's log (the process has exited or been killed).
func (p *Process) tryStart() (string, bool) {
	p.t.Helper()
	logPath := filepath.Join(p.dir, "influxd.log")
	_ = os.Remove(logPath)
	cmd := exec.Command(p.bin, "run", "-config", p.conf)
	log, _ := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start influxd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if resp, err := httpGet(p.base + "/ping"); err == nil {
			resp.Body.Close()
			// Another test's influxd may hold the port ours failed to bind:
			// only ours names our config file on its command line.
			if p.answersAsOurs() {
				return "", true
			}
			p.Kill()
			b, _ := os.ReadFile(logPath)
			return string(b) + "\naddress already in use: another influxd answers on " + p.base, false
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			return string(b), false
		default:
		}
	}
	p.Kill()
	b, _ := os.ReadFile(logPath)
	return string(b), false
}

// answersAsOurs says whether the influxd at p.base runs with p's config
// (its /debug/vars lists its command line).
func (p *Process) answersAsOurs() bool {
	resp, err := httpGet(p.base + "/debug/vars")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var vars struct {
		Cmdline []string `json:"cmdline"`
	}
	return json.NewDecoder(resp.Body).Decode(&vars) == nil && slices.Contains(vars.Cmdline, p.conf)
}

// Database creates a fresh database on the process.
func (p *Process) Database(t testing.TB) *Server { return createDB(t, p.base) }

// Kill kills influxd (SIGKILL) and waits until it is gone.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Restart starts influxd again on the same port and data.
func (p *Process) Restart() { p.start() }

// Pause stops influxd (SIGSTOP): it keeps its socket and answers nothing.
func (p *Process) Pause() { p.signal(syscall.SIGSTOP) }

// Resume continues a paused influxd (SIGCONT).
func (p *Process) Resume() { p.signal(syscall.SIGCONT) }

func (p *Process) signal(s syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.cmd.Process.Signal(s)
	}
}

func httpGet(u string) (*http.Response, error) { return http.Get(u) }

// Flux runs a Flux query and returns its records' values.
func (s *Server) Flux(t testing.TB, query string) []map[string]any {
	t.Helper()
	c := influxdb2.NewClient(s.URL, s.Token)
	defer c.Close()
	res, err := c.QueryAPI(s.Org).Query(context.Background(), query)
	if err != nil {
		t.Fatalf("flux %q: %v", strings.TrimSpace(query), err)
	}
	var out []map[string]any
	for res.Next() {
		out = append(out, res.Record().Values())
	}
	if res.Err() != nil {
		t.Fatalf("flux: %v", res.Err())
	}
	return out
}

// Count is how many field values of measurement meas the database holds
// (one per series, time and field).
func (s *Server) Count(t testing.TB, meas string) int64 {
	t.Helper()
	rows := s.Flux(t, fmt.Sprintf(`from(bucket:%q) |> range(start: 0) |> filter(fn: (r) => r._measurement == %q) |> group() |> count()`, s.Bucket, meas))
	if len(rows) == 0 {
		return 0
	}
	return rows[0]["_value"].(int64)
}

// Outage is one way an InfluxDB goes away mid-run and comes back.
type Outage struct {
	Name    string // "killed" or "stopped"
	Fault   func(*Process)
	Recover func(*Process)
}

// Outages are the outages fault tests run through: killed (the socket is
// gone) and stopped (SIGSTOP: the socket stays and nothing answers, so
// writes time out).
func Outages() []Outage {
	return []Outage{
		{"killed", (*Process).Kill, (*Process).Restart},
		{"stopped", (*Process).Pause, (*Process).Resume},
	}
}
