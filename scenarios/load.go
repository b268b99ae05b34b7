package scenarios

import (
	"fmt"
	"strings"
)

// WithLoad is a copy of s whose workload traffic entry offers load (a
// fraction of each host's link rate): the entry named traffic, or the
// only workload entry when traffic is "". Capacity searches use it; the
// copy is validated like the scenario file, and its name says the load.
func (s *Scenario) WithLoad(traffic string, load float64) (*Scenario, error) {
	idx := -1
	var names []string
	for i, t := range s.Traffic {
		if t.Pattern != PatternWorkload {
			continue
		}
		names = append(names, t.PointName(i))
		if traffic == "" || t.PointName(i) == traffic {
			if idx >= 0 && traffic == "" {
				return nil, fmt.Errorf("scenario %s has several workload entries (%s): name one", s.Name, strings.Join(names, ", "))
			}
			idx = i
		}
	}
	switch {
	case idx < 0 && traffic != "":
		return nil, fmt.Errorf("scenario %s has no workload traffic entry named %q (workload entries: %s)", s.Name, traffic, strings.Join(names, ", "))
	case idx < 0:
		return nil, fmt.Errorf("scenario %s has no workload traffic entry: a load sweep needs pattern: workload", s.Name)
	}
	if len(s.Matrix) > 0 {
		return nil, fmt.Errorf("scenario %s has a matrix; a load sweep measures one scheme, topology and workload (fix the matrix's values in the scenario)", s.Name)
	}
	c := s.clone()
	c.Traffic[idx].Load = load
	c.Name = fmt.Sprintf("%s-load%g", s.Name, load)
	if ps := c.validate(s.ix); len(ps) > 0 {
		return nil, fmt.Errorf("scenario %s at load %g: %w", s.Name, load, ps.Err())
	}
	return c, nil
}
