package regress

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// The common JUnit XML shape CI systems read (Jenkins, GitLab, GitHub
// actions' test reporters): testsuites > testsuite > testcase, with a
// failure element on a failed case.

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
	Text    string `xml:",chardata"`
}

// JUnitMeta names what was compared.
type JUnitMeta struct {
	Baseline, Candidate string // run IDs or names
	Started             time.Time
	Elapsed             time.Duration
}

// WriteJUnit writes the verdict as JUnit XML: one testsuite per group of
// points, one testcase per metric checked, a failure per regression.
func WriteJUnit(w io.Writer, v Verdict, m JUnitMeta) error {
	secs := fmt.Sprintf("%.3f", m.Elapsed.Seconds())
	root := junitSuites{Name: fmt.Sprintf("labctl regress: %s vs baseline %s", m.Candidate, m.Baseline), Time: secs}
	idx := map[string]int{}
	for _, c := range v.Checks {
		i, ok := idx[c.Group]
		if !ok {
			i = len(root.Suites)
			idx[c.Group] = i
			name := c.Group
			if name == "" {
				name = "run"
			}
			root.Suites = append(root.Suites, junitSuite{Name: name, Time: "0", Timestamp: m.Started.UTC().Format("2006-01-02T15:04:05")})
		}
		s := &root.Suites[i]
		tc := junitCase{Name: c.Name(), Classname: "labctl.regress." + s.Name, Time: "0", SystemOut: c.Message()}
		if c.Regressed {
			typ := "regression"
			if c.Missing {
				typ = "missing"
			}
			tc.Failure = &junitFailure{Message: c.Message(), Type: typ, Text: c.Message()}
			s.Failures++
			root.Failures++
		}
		s.Tests++
		root.Tests++
		s.Cases = append(s.Cases, tc)
	}
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
