package reports

import (
	"fmt"
	"slices"
	"strings"
)

// Compare treats the points of several runs as one set: each point keeps
// its run's id, takes its scheme from its Params or else from its run's
// scenario name (the run id when several runs without a scheme share a
// scenario name), and the groups and comparisons span all runs. The size
// buckets and baseline are the Analyser's.
func (a Analyser) Compare(runs []*Run) (*Summary, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("compare: no runs")
	}
	sum := &Summary{}
	scenarios := map[string]int{}
	for _, r := range runs {
		scenarios[r.Manifest.Scenario]++
	}
	var labs, scens, outcomes []string
	for _, r := range runs {
		s, err := a.points(r)
		if err != nil {
			return nil, err
		}
		fallback := s.Scenario
		if scenarios[fallback] > 1 {
			fallback = s.RunID
		}
		for _, p := range s.Points {
			p.Run = s.RunID
			if p.Scheme == "" {
				p.Scheme = fallback
			}
			sum.Points = append(sum.Points, p)
		}
		sum.Runs, sum.Buckets = append(sum.Runs, s.RunID), s.Buckets
		sum.Warnings = append(sum.Warnings, s.Warnings...)
		labs, scens, outcomes = appendNew(labs, s.Lab), appendNew(scens, s.Scenario), appendNew(outcomes, s.Outcome)
	}
	sum.Lab, sum.Scenario, sum.Outcome = strings.Join(labs, ", "), strings.Join(scens, ", "), strings.Join(outcomes, ", ")
	if err := a.across(sum); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	return sum, nil
}

func appendNew(s []string, v string) []string {
	if v == "" || slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
