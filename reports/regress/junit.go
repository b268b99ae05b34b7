package regress

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// The JUnit XML CI servers read (Jenkins' junit-10 schema, which GitLab
// and GitHub's test reporters accept too; a copy in testdata/, checked
// with xmllint by the tests): testsuites > testsuite > testcase, a
// failure element on a failed case.
//
// What Jenkins does with it shapes three choices:
//   - It splits a classname at its last dot into package and class, so a
//     dot inside a parameter value (load=0.3) would cut the class in two:
//     classnames are labctl.regress.<class> where <class> is the suite's
//     key=value pairs joined by commas, dots and spaces inside a value
//     replaced by '_' (load=0_3).
//   - It shows a suite's time as given and the total as the sum of the
//     suites: regress does not time checks one by one, so the run's
//     elapsed time is split evenly over its checks, in whole milliseconds,
//     and every suite's time is the sum of its cases' (the root's, of the
//     suites').
//   - It prints a failure's message and body and a case's system-out one
//     after the other: each message is written once, as the failure's
//     message on a failed case, as system-out on a passed one.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
	ms        int64
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
}

// JUnitMeta names what was compared.
type JUnitMeta struct {
	Baseline, Candidate string // run IDs or names
	Started             time.Time
	Elapsed             time.Duration
}

// WriteJUnit writes the verdict as JUnit XML: one testsuite per group of
// points (per pair of groups when the candidate's scheme is another), one
// testcase per metric checked, a failure per regression.
func WriteJUnit(w io.Writer, v Verdict, m JUnitMeta) error {
	root := junitSuites{Name: fmt.Sprintf("labctl regress: %s vs baseline %s", m.Candidate, m.Baseline)}
	total := m.Elapsed.Round(time.Millisecond).Milliseconds()
	idx := map[string]int{}
	for n, c := range v.Checks {
		key := c.Group + "\x00" + c.CandidateGroup
		i, ok := idx[key]
		if !ok {
			i = len(root.Suites)
			idx[key] = i
			root.Suites = append(root.Suites, junitSuite{Name: suiteName(c), Timestamp: m.Started.UTC().Format("2006-01-02T15:04:05")})
		}
		s := &root.Suites[i]
		// check n's share of the elapsed time: the shares add up to total
		ms := total / int64(len(v.Checks))
		if int64(n) < total%int64(len(v.Checks)) {
			ms++
		}
		s.ms += ms
		tc := junitCase{Name: c.Name(), Classname: "labctl.regress." + className(c), Time: seconds(ms)}
		if c.Regressed {
			typ := "regression"
			if c.Missing {
				typ = "missing"
			}
			tc.Failure = &junitFailure{Message: c.Message(), Type: typ}
			s.Failures++
			root.Failures++
		} else {
			tc.SystemOut = c.Message()
		}
		s.Tests++
		root.Tests++
		s.Cases = append(s.Cases, tc)
	}
	var sum int64
	for i := range root.Suites {
		root.Suites[i].Time = seconds(root.Suites[i].ms)
		sum += root.Suites[i].ms
	}
	root.Time = seconds(sum) // the elapsed time, or 0 with no checks
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// seconds prints whole milliseconds as seconds with three decimals,
// exactly, so sums of printed times equal the printed sums.
func seconds(ms int64) string { return fmt.Sprintf("%d.%03d", ms/1000, ms%1000) }

// splitScheme splits a group key ("scheme=drill load=0.3 ...") into its
// scheme and the rest (the condition).
func splitScheme(group string) (scheme, cond string) {
	if rest, ok := strings.CutPrefix(group, "scheme="); ok {
		scheme, cond, _ = strings.Cut(rest, " ")
		return scheme, cond
	}
	return "", group
}

// suiteName is the group checked; when the candidate's group is another
// scheme's, the condition with both schemes, the candidate's first:
// "load=0.3 workload=websearch: drill vs baseline ecmp".
func suiteName(c Check) string {
	if c.Group == "" {
		return "run"
	}
	if c.CandidateGroup == "" {
		return c.Group
	}
	bs, cond := splitScheme(c.Group)
	cs, _ := splitScheme(c.CandidateGroup)
	if bs == "" || cs == "" {
		return c.CandidateGroup + " vs baseline " + c.Group
	}
	return fmt.Sprintf("%s: %s vs baseline %s", cond, cs, bs)
}

// className is the suite as one classname component: its key=value pairs
// (the scheme first, "cand-vs-base" when the schemes differ) joined by
// commas, with no dot or space inside (see the comment at the top of this file).
func className(c Check) string {
	if c.Group == "" {
		return "run"
	}
	bs, cond := splitScheme(c.Group)
	var parts []string
	if bs != "" {
		scheme := bs
		if cs, _ := splitScheme(c.CandidateGroup); c.CandidateGroup != "" && cs != "" {
			scheme = cs + "-vs-" + bs
		}
		parts = append(parts, "scheme="+scheme)
	}
	parts = append(parts, strings.Fields(cond)...)
	clean := strings.NewReplacer(".", "_", " ", "_")
	for i, p := range parts {
		parts[i] = clean.Replace(p)
	}
	return strings.Join(parts, ",")
}
