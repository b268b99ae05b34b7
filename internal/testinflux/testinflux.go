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
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	db := fmt.Sprintf("labctl_test_%d_%d", os.Getpid(), seq.Add(1))
	resp, err := http.PostForm(base+"/query", url.Values{"q": {"CREATE DATABASE " + db}})
	if err != nil {
		t.Fatalf("influxd %s: %v", base, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("influxd %s: CREATE DATABASE: %s", base, resp.Status)
	}
	return &Server{URL: base, Bucket: db, Org: "", Token: ""}
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
	bin := findInfluxd()
	if bin == "" {
		msg := "no influxd: run ./scripts/test.sh, which installs InfluxDB 1.8.10 (or set LABCTL_INFLUXD)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	http, rpc := freePort(t), freePort(t)
	conf := strings.NewReplacer("@DIR@", dir, "@HTTP@", fmt.Sprint(http), "@RPC@", fmt.Sprint(rpc)).Replace(confTmpl)
	cf := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-config", cf)
	log, _ := os.Create(filepath.Join(dir, "influxd.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start influxd: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", http)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if resp, err := httpGet(base + "/ping"); err == nil {
			resp.Body.Close()
			return base
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "influxd.log"))
	t.Fatalf("influxd did not start:\n%s", b)
	return ""
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
