package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/internal/testinflux"
	"github.com/labctl/labctl/scenarios"
)

// schemaNames is what some source says a measurement holds.
type schemaNames struct{ fields, tags map[string]bool }

func addName(m map[string]*schemaNames, meas string) *schemaNames {
	if m[meas] == nil {
		m[meas] = &schemaNames{fields: map[string]bool{}, tags: map[string]bool{}}
	}
	return m[meas]
}

// dashQuery is one InfluxQL query of a dashboard, and where it is.
type dashQuery struct{ where, query string }

// dashboardQueries collects every InfluxQL query of a Grafana dashboard:
// panel targets (rows' panels too), annotations and template variables.
func dashboardQueries(t *testing.T, file string) []dashQuery {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID         string
		Panels      []json.RawMessage
		Annotations struct {
			List []struct {
				Name, Query string
				BuiltIn     int
			}
		}
		Templating struct {
			List []struct{ Name, Type, Query string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.UID == "" {
		t.Errorf("%s: no uid (provisioned dashboards need a stable one)", file)
	}
	var qs []dashQuery
	type panel struct {
		Title   string
		Type    string
		Panels  []json.RawMessage
		Targets []struct {
			RefID    string
			RawQuery bool
			Query    string
		}
	}
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			walk(p.Panels)
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", file, p.Title)
			}
			for _, tg := range p.Targets {
				if !tg.RawQuery || tg.Query == "" {
					t.Errorf("%s: panel %q target %s is not a raw InfluxQL query", file, p.Title, tg.RefID)
				}
				qs = append(qs, dashQuery{fmt.Sprintf("panel %q %s", p.Title, tg.RefID), tg.Query})
			}
		}
	}
	walk(d.Panels)
	for _, a := range d.Annotations.List {
		if a.BuiltIn == 0 {
			qs = append(qs, dashQuery{fmt.Sprintf("annotation %q", a.Name), a.Query})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			qs = append(qs, dashQuery{fmt.Sprintf("variable %q", v.Name), v.Query})
		}
	}
	return qs
}

var (
	showTagValues = regexp.MustCompile(`^SHOW TAG VALUES FROM "([^"]+)" WITH KEY = "([^"]+)"(.*)$`)
	selectFrom    = regexp.MustCompile(`^SELECT (.*?) FROM "([^"]+)"(.*)$`)
	asAlias       = regexp.MustCompile(`AS "[^"]*"`)
	quotedIdent   = regexp.MustCompile(`"([^"]+)"`)
)

// queryNames reads the measurement, the names a query selects (fields or
// tags) and the names it filters or groups on (tags).
func queryNames(q string) (meas string, selected, tags []string, err error) {
	idents := func(s string) []string {
		var out []string
		for _, m := range quotedIdent.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if m := showTagValues.FindStringSubmatch(q); m != nil {
		return m[1], nil, append([]string{m[2]}, idents(m[3])...), nil
	}
	if m := selectFrom.FindStringSubmatch(q); m != nil {
		return m[2], idents(asAlias.ReplaceAllString(m[1], "")), idents(m[3]), nil
	}
	return "", nil, nil, fmt.Errorf("not a SELECT or SHOW TAG VALUES query")
}

// schemaOf is what collectors' schema says each measurement holds
// (per-priority fields expanded).
func schemaOf() map[string]*schemaNames {
	out := map[string]*schemaNames{}
	for _, m := range collectors.Schema() {
		s := addName(out, m.Name)
		for _, f := range m.Fields {
			for _, n := range f.Names() {
				s.fields[n] = true
			}
		}
		for _, t := range m.Tags {
			s.tags[t] = true
		}
	}
	return out
}

// influxQL runs an InfluxQL query on db and returns its series count, or
// the error InfluxDB answered.
func influxQL(t *testing.T, base, db, q string) (int, error) {
	t.Helper()
	resp, err := http.Get(base + "/query?" + url.Values{"db": {db}, "q": {q}, "epoch": {"ns"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Error   string
		Results []struct {
			Error  string
			Series []json.RawMessage
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if r.Error != "" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	n := 0
	for _, res := range r.Results {
		if res.Error != "" {
			return 0, fmt.Errorf("%s", res.Error)
		}
		n += len(res.Series)
	}
	return n, nil
}

// TestGrafanaDashboardsQueryWhatLabctlWrites runs a small incast on an
// emulated lab, with telemetry to a real influxd, and checks every query
// of every dashboard under grafana/dashboards:
//   - each measurement and field it selects, and each tag it filters or
//     groups on, is one the run's line protocol holds, or, for a
//     measurement a healthy run does not write (collector_gap), one the
//     collectors and scenarios packages write in their source;
//   - with Grafana's variables expanded as Grafana does for this run, it
//     is valid InfluxQL on influxd 1.8, and every panel query of a
//     measurement the run wrote returns data;
//   - every measurement the run wrote has a panel.
//
// The provisioning files are checked to name the dashboards' folder and
// an InfluxDB datasource.
func TestGrafanaDashboardsQueryWhatLabctlWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	influx := testinflux.Start(t)
	inv, pool, agentBin := emulatedLab(t, "leafspine:1x2:2")
	s, err := scenarios.Parse([]byte(`name: grafana
telemetry: {interval: 100us}
traffic:
  - {name: incast, pattern: incast, senders: 3, receiver: h1, bytes: 16MiB}
`), "grafana.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &scenarios.Runner{Lab: inv, SSH: pool, OutDir: t.TempDir(), AgentPath: agentBin,
		Influx: &collectors.InfluxConfig{URL: influx.URL, Bucket: influx.Bucket, Org: influx.Org, Token: influx.Token}}
	o, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}

	produced := map[string]*schemaNames{}
	var first, last time.Time
	lps, _ := filepath.Glob(filepath.Join(o.Dir, "telemetry", "*.lp"))
	for _, f := range lps {
		err := collectors.ReadLPFile(f, func(p collectors.Point) error {
			s := addName(produced, p.Measurement)
			for k := range p.Fields {
				s.fields[k] = true
			}
			for k := range p.Tags {
				s.tags[k] = true
			}
			if first.IsZero() || p.Time.Before(first) {
				first = p.Time
			}
			if p.Time.After(last) {
				last = p.Time
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range collectors.Schema() {
		if m.Always && produced[m.Name] == nil {
			t.Fatalf("the run wrote no %s telemetry (files %v)", m.Name, lps)
		}
	}
	schema := schemaOf()

	// Grafana's expansion for this run: the whole run's time range, every
	// switch and host (the All value), lossless priority 3, and the
	// smallest $__interval Grafana computes (1ms). The incast lasts about
	// 4 ms of simulated time, so rate panels get several buckets.
	vars := strings.NewReplacer(
		"$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", first.Add(-time.Second).UnixMilli(), last.Add(time.Second).UnixMilli()),
		"$__interval", "1ms",
		"${prio}", "3", "$prio", "3",
		"$lab", regexp.QuoteMeta(inv.Name),
		"$run", regexp.QuoteMeta(o.RunID),
		"$device", ".*", "$host", ".*",
	)
	dashboards, _ := filepath.Glob("../grafana/dashboards/*.json")
	if len(dashboards) == 0 {
		t.Fatal("no dashboards under grafana/dashboards")
	}
	panelsOf := map[string]int{}
	for _, file := range dashboards {
		for _, dq := range dashboardQueries(t, file) {
			where := filepath.Base(file) + ": " + dq.where
			// names as Grafana expands them, for every priority offered
			var meas string
			var selected, tags []string
			for p := 0; p < 8; p++ {
				ps := strconv.Itoa(p)
				m, sel, tg, err := queryNames(strings.NewReplacer("${prio}", ps, "$prio", ps).Replace(dq.query))
				if err != nil {
					t.Errorf("%s: %v: %s", where, err, dq.query)
				}
				meas, selected, tags = m, append(selected, sel...), append(tags, tg...)
			}
			if meas == "" {
				continue
			}
			names, source := produced[meas], "the run's telemetry"
			if schema[meas] == nil {
				t.Errorf("%s: measurement %q is not in collectors.Schema", where, meas)
				continue
			}
			for _, f := range dedupe(selected) {
				if !schema[meas].fields[f] && !schema[meas].tags[f] {
					t.Errorf("%s: %q is no field or tag of measurement %q in collectors.Schema", where, f, meas)
				}
			}
			for _, g := range dedupe(tags) {
				if g != "time" && !schema[meas].tags[g] {
					t.Errorf("%s: %q is no tag of measurement %q in collectors.Schema", where, g, meas)
				}
			}
			if names == nil {
				names, source = schema[meas], "collectors.Schema"
			}
			for _, f := range dedupe(selected) {
				if !names.fields[f] && !names.tags[f] {
					t.Errorf("%s: %q is no field or tag of measurement %q in %s (fields %v)", where, f, meas, source, sorted(names.fields))
				}
			}
			for _, g := range dedupe(tags) {
				if g != "time" && !names.tags[g] {
					t.Errorf("%s: %q is no tag of measurement %q in %s (tags %v)", where, g, meas, source, sorted(names.tags))
				}
			}
			q := vars.Replace(dq.query)
			n, err := influxQL(t, influx.URL, influx.Bucket, q)
			switch {
			case err != nil:
				t.Errorf("%s: influxd refused the query: %v\n%s", where, err, q)
			case n == 0 && produced[meas] != nil:
				t.Errorf("%s: no data for this run\n%s", where, q)
			}
			if strings.HasPrefix(dq.where, "panel") {
				panelsOf[meas]++
			}
		}
	}
	for m := range produced {
		if panelsOf[m] == 0 {
			t.Errorf("measurement %q has no panel", m)
		}
	}
	if panelsOf[collectors.MeasGap] == 0 {
		t.Error("collector gaps have no panel")
	}

	// provisioning: a file provider for the dashboards, an InfluxDB datasource
	var ds struct {
		Datasources []struct{ Type, URL string }
	}
	var prov struct {
		Providers []struct {
			Type    string
			Options struct{ Path string }
		}
	}
	for f, v := range map[string]any{"../grafana/provisioning/datasources/labctl-influxdb.yaml": &ds, "../grafana/provisioning/dashboards/labctl.yaml": &prov} {
		b, err := os.ReadFile(f)
		if err == nil {
			err = yaml.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "influxdb" || ds.Datasources[0].URL == "" {
		t.Errorf("datasource provisioning: %+v", ds)
	}
	if len(prov.Providers) != 1 || prov.Providers[0].Type != "file" || prov.Providers[0].Options.Path == "" {
		t.Errorf("dashboard provisioning: %+v", prov)
	}
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
