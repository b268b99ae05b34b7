package regress

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/reports"
)

// node is an XML element as a tree, for checking a document's counts,
// times and names.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Kids    []*node    `xml:",any"`
	Text    string     `xml:",chardata"`
	name    string
	attrs   map[string]string
}

func parseTree(t *testing.T, b []byte) *node {
	t.Helper()
	var root node
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	var index func(n *node)
	index = func(n *node) {
		n.name, n.attrs = n.XMLName.Local, map[string]string{}
		for _, a := range n.Attrs {
			n.attrs[a.Name.Local] = a.Value
		}
		for _, k := range n.Kids {
			index(k)
		}
	}
	index(&root)
	return &root
}

// junitSchema is Jenkins' junit-10 schema (xunit plugin,
// src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd,
// MIT licence kept in its header), as the JUnit plugin reads reports.
const junitSchema = "testdata/junit-10.xsd"

// xmllint is the path of libxml2's xmllint. Without it the schema test
// skips, saying so, except in CI (CI=true), where it fails: the test
// command installs it (scripts/test.sh).
func xmllint(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("xmllint not found (Debian libxml2-utils; scripts/test.sh installs it): the JUnit schema check cannot run in CI without it")
	}
	t.Skip("xmllint not found (install Debian's libxml2-utils): the JUnit output is not checked against Jenkins' junit-10 schema")
	return ""
}

// validateJUnit10 runs xmllint --schema on doc: nil when the schema
// accepts it, else xmllint's complaints.
func validateJUnit10(t *testing.T, lint string, doc []byte) error {
	t.Helper()
	f := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--schema", junitSchema, f).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// The schema check can fail: xmllint refuses what junit-10 forbids.
func TestJUnit10SchemaRefuses(t *testing.T) {
	t.Parallel()
	lint := xmllint(t)
	for name, doc := range map[string]string{
		"suite without failures": `<testsuites><testsuite name="a" tests="1" errors="0"/></testsuites>`,
		"time not SUREFIRE_TIME": `<testsuites time="1.2.3"/>`,
		"unknown attribute":      `<testsuites><testsuite name="a" tests="0" failures="0" errors="0" colour="red"/></testsuites>`,
		"case outside a suite":   `<testsuites><testcase name="t"/></testsuites>`,
	} {
		if err := validateJUnit10(t, lint, []byte(doc)); err == nil {
			t.Errorf("%s: the schema accepted %s", name, doc)
		}
	}
	if err := validateJUnit10(t, lint, []byte(`<testsuites time="1,234.5"><testsuite name="a" tests="0" failures="0" errors="0"/></testsuites>`)); err != nil {
		t.Errorf("a valid document was refused: %v", err)
	}
}

func ms(t *testing.T, s string) int64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return int64(f*1000 + 0.5)
}

func kids(n *node, name string) []*node {
	var out []*node
	for _, k := range n.Kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// regress's JUnit as Jenkins reads it: valid against the junit-10
// schema (xmllint); counts and times that add up (cases to suites, suites
// to the root, the root to the elapsed time); classnames whose components
// hold no dot or space (Jenkins splits at the last dot), with the load
// kept readable as load=0_3; a suite naming the candidate's scheme beside
// the baseline's; each message written once.
func TestJUnitAsJenkinsReadsIt(t *testing.T) {
	t.Parallel()
	rules := &Thresholds{Rules: []Rule{{Metric: "*", Bucket: "*", Relative: f(0.1)}}}
	var buf, all bytes.Buffer
	for _, tc := range []struct {
		name       string
		base, cand []reports.Metric
		fails      int
		suite      string
		class      string
	}{
		{"same scheme",
			[]reports.Metric{met("load=0.3", "fct.mean", "", "ns", 100), met("load=0.3", "fct.p99", "<100KB", "ns", 100), met("load=0.5", "fct.mean", "", "ns", 100)},
			[]reports.Metric{met("load=0.3", "fct.mean", "", "ns", 150), met("load=0.3", "fct.p99", "<100KB", "ns", 100)},
			2, "load=0.3", "labctl.regress.load=0_3"},
		{"dots in several values",
			[]reports.Metric{met("cdf=web.search.v2 load=0.25", "fct.mean", "", "ns", 100), met("cdf=web.search.v2 load=0.25", "fct.p99", "<1.5MB", "ns", 100)},
			[]reports.Metric{met("cdf=web.search.v2 load=0.25", "fct.mean", "", "ns", 100), met("cdf=web.search.v2 load=0.25", "fct.p99", "<1.5MB", "ns", 300)},
			1, "cdf=web.search.v2 load=0.25", "labctl.regress.cdf=web_search_v2,load=0_25"},
		{"another scheme",
			metrics("ecmp", map[float64]float64{0.3: 100, 0.5: 200}), metrics("drill", map[float64]float64{0.3: 105, 0.5: 300}),
			2, "load=0.3 workload=websearch: drill vs baseline ecmp", "labctl.regress.scheme=drill-vs-ecmp,load=0_3,workload=websearch"},
	} {
		buf.Reset()
		v := Compare(tc.base, tc.cand, rules)
		if err := WriteJUnit(&buf, v, JUnitMeta{Baseline: "b", Candidate: "c", Started: time.Unix(0, 0), Elapsed: 1234567 * time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		all.Write(buf.Bytes())
		root := parseTree(t, buf.Bytes())
		if root == nil || root.name != "testsuites" {
			t.Fatalf("%s: root is not testsuites:\n%s", tc.name, buf.String())
		}
		doc := slices.Clone(buf.Bytes())
		t.Run(tc.name+"/junit-10 schema", func(t *testing.T) {
			if err := validateJUnit10(t, xmllint(t), doc); err != nil {
				t.Errorf("not valid junit-10: %v\n%s", err, doc)
			}
		})
		var tests, fails, suiteMs int64
		var suites, classes []string
		for _, s := range kids(root, "testsuite") {
			suites = append(suites, s.attrs["name"])
			var n, nf, caseMs int64
			for _, c := range kids(s, "testcase") {
				n++
				caseMs += ms(t, c.attrs["time"])
				nf += int64(len(kids(c, "failure")))
				cl := c.attrs["classname"]
				classes = append(classes, cl)
				pkg, class := cl[:max(strings.LastIndex(cl, "."), 0)], cl[strings.LastIndex(cl, ".")+1:]
				if pkg != "labctl.regress" || strings.ContainsAny(class, " .") || class == "" {
					t.Errorf("%s: classname %q splits into package %q and class %q", tc.name, cl, pkg, class)
				}
				msgs := 0
				for _, f := range kids(c, "failure") {
					if f.attrs["message"] != "" {
						msgs++
					}
					if strings.TrimSpace(f.Text) != "" {
						msgs++
					}
				}
				for _, o := range kids(c, "system-out") {
					if strings.TrimSpace(o.Text) != "" {
						msgs++
					}
				}
				if msgs != 1 {
					t.Errorf("%s: case %s says its message %d times", tc.name, c.attrs["name"], msgs)
				}
			}
			if strconv.FormatInt(n, 10) != s.attrs["tests"] || strconv.FormatInt(nf, 10) != s.attrs["failures"] || s.attrs["errors"] != "0" {
				t.Errorf("%s: suite %s says tests=%s failures=%s, holds %d and %d", tc.name, s.attrs["name"], s.attrs["tests"], s.attrs["failures"], n, nf)
			}
			if got := ms(t, s.attrs["time"]); got != caseMs {
				t.Errorf("%s: suite %s time %d ms, its cases %d ms", tc.name, s.attrs["name"], got, caseMs)
			}
			tests, fails, suiteMs = tests+n, fails+nf, suiteMs+caseMs
		}
		if strconv.FormatInt(tests, 10) != root.attrs["tests"] || strconv.FormatInt(fails, 10) != root.attrs["failures"] || fails != int64(tc.fails) {
			t.Errorf("%s: root tests=%s failures=%s, suites %d and %d, want %d failures", tc.name, root.attrs["tests"], root.attrs["failures"], tests, fails, tc.fails)
		}
		if got := ms(t, root.attrs["time"]); got != suiteMs || got != 1235 {
			t.Errorf("%s: root time %d ms, suites %d ms, elapsed 1235 ms", tc.name, got, suiteMs)
		}
		if !slices.Contains(suites, tc.suite) || !slices.Contains(classes, tc.class) {
			t.Errorf("%s: suites %q, classnames %q; want %q and %q", tc.name, suites, classes, tc.suite, tc.class)
		}
	}
	if !strings.Contains(all.String(), `type="regression"`) || !strings.Contains(all.String(), `type="missing"`) {
		t.Error("want failures of type regression and missing (load=0.5 is not in the first candidate)")
	}
}
