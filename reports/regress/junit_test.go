package regress

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/reports"
)

// node is an XML element as a tree, for checking a document against the
// rules of a schema.
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

// junit10 is what Jenkins' junit-10 schema (xunit plugin) allows of each
// element: its attributes, which of them are required, and its child
// elements. Times have the schema's SUREFIRE_TIME pattern.
var junit10 = map[string]struct{ attrs, required, kids []string }{
	"testsuites": {attrs: []string{"name", "time", "tests", "failures", "errors"}, kids: []string{"testsuite"}},
	"testsuite": {
		attrs:    []string{"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"},
		required: []string{"name", "tests", "failures", "errors"},
		kids:     []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
	},
	"testcase": {
		attrs:    []string{"name", "time", "classname", "group"},
		required: []string{"name"},
		kids:     []string{"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError", "system-out", "system-err"},
	},
	"failure":    {attrs: []string{"type", "message"}},
	"error":      {attrs: []string{"type", "message"}},
	"skipped":    {attrs: []string{"type", "message"}},
	"system-out": {},
	"system-err": {},
}

var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

// checkJUnit10 reports every way the tree breaks the schema's rules.
func checkJUnit10(n *node, path string) []string {
	var errs []string
	rule, ok := junit10[n.name]
	if !ok {
		return []string{path + ": element not in the schema"}
	}
	for a := range n.attrs {
		if !slices.Contains(rule.attrs, a) {
			errs = append(errs, fmt.Sprintf("%s: attribute %s not allowed", path, a))
		}
	}
	for _, a := range rule.required {
		if _, ok := n.attrs[a]; !ok {
			errs = append(errs, fmt.Sprintf("%s: required attribute %s missing", path, a))
		}
	}
	if tm, ok := n.attrs["time"]; ok && (n.name == "testsuite" || n.name == "testsuites") && !surefireTime.MatchString(tm) {
		errs = append(errs, fmt.Sprintf("%s: time %q does not match SUREFIRE_TIME", path, tm))
	}
	if len(rule.kids) == 0 && len(n.Kids) > 0 {
		errs = append(errs, path+": holds elements")
	}
	for i, k := range n.Kids {
		p := fmt.Sprintf("%s/%s[%d]", path, k.name, i)
		if !slices.Contains(rule.kids, k.name) {
			errs = append(errs, p+": not allowed here")
			continue
		}
		errs = append(errs, checkJUnit10(k, p)...)
	}
	return errs
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
// schema's rules; counts and times that add up (cases to suites, suites
// to the root, the root to the elapsed time); classnames whose components
// hold no dot or space (Jenkins splits at the last dot), with the load
// kept readable as load=0_3; a suite naming the candidate's scheme beside
// the baseline's; each message written once.
func TestJUnitAsJenkinsReadsIt(t *testing.T) {
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
		for _, e := range checkJUnit10(root, "/testsuites") {
			t.Errorf("%s: %s", tc.name, e)
		}
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
