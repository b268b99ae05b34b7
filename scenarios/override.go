package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Set sets the field at path (written as a matrix path, e.g.
// traffic[0].duration) to value, given as YAML. A sweep whose values are
// whole sections holding the field (a sweep of traffic[0] with entries as
// values) gets the field set in each of its values too, so a cut-down
// copy of a scenario (labctl papers --quick) keeps its matrix. A field the
// matrix sets itself is refused: Keep cuts a sweep's values instead.
// Variants validates the result as it validates the file.
func (s *Scenario) Set(path, value string) error {
	steps, err := parsePath(path)
	if err != nil {
		return fmt.Errorf("scenario %s: set %s: %w", s.Name, path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) != 1 {
		return fmt.Errorf("scenario %s: set %s: value %q is not one YAML value", s.Name, path, value)
	}
	val := doc.Content[0]
	for i := range s.Matrix {
		w := &s.Matrix[i]
		if within(w.Path, path) {
			return fmt.Errorf("scenario %s: set %s: matrix[%d] sweeps %s; keep some of its values instead", s.Name, path, i, w.Path)
		}
		if !within(path, w.Path) {
			continue
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(path, w.Path), ".")
		for j := range w.Values {
			if err := setInNode(&w.Values[j], strings.Split(rest, "."), val); err != nil {
				return fmt.Errorf("scenario %s: set %s in matrix[%d].values[%d]: %w", s.Name, path, i, j, err)
			}
		}
	}
	if err := setPath(reflect.ValueOf(s).Elem(), steps, val); err != nil {
		return fmt.Errorf("scenario %s: set %s: %w", s.Name, path, err)
	}
	return nil
}

// setInNode sets the key path keys to val inside a mapping node, adding
// keys it lacks.
func setInNode(n *yaml.Node, keys []string, val *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("the value is not a section (a mapping)")
	}
	k := keys[0]
	if k == "" || strings.ContainsAny(k, "[]") {
		return fmt.Errorf("bad key %q: only keys reach into a swept section", k)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			if len(keys) == 1 {
				n.Content[i+1] = val
				return nil
			}
			return setInNode(n.Content[i+1], keys[1:], val)
		}
	}
	child := val
	if len(keys) > 1 {
		child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if err := setInNode(child, keys[1:], val); err != nil {
			return err
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, child)
	return nil
}

// Keep cuts the sweep named name (its parameter name: scheme, load,
// workload, ...) to the values named, by label where the sweep has
// labels, else by value as point names show it; the order stays the
// file's. Naming a value the sweep lacks is an error.
func (s *Scenario) Keep(name string, values ...string) error {
	for i := range s.Matrix {
		w := &s.Matrix[i]
		if w.ParamName() != name {
			continue
		}
		var kept []yaml.Node
		var labels, have []string
		for j, v := range w.Values {
			id := v.Value
			if len(w.Labels) == len(w.Values) {
				id = w.Labels[j]
			} else if v.Kind == yaml.ScalarNode {
				id = labelValue(v.Value)
			}
			have = append(have, id)
			if slices.Contains(values, id) {
				kept = append(kept, v)
				if len(w.Labels) == len(w.Values) {
					labels = append(labels, w.Labels[j])
				}
			}
		}
		for _, want := range values {
			if !slices.Contains(have, want) {
				return fmt.Errorf("scenario %s: keep %s=%s: the sweep has %s", s.Name, name, want, strings.Join(have, ", "))
			}
		}
		w.Values, w.Labels = kept, labels
		return nil
	}
	return fmt.Errorf("scenario %s: keep %s: no sweep of that name", s.Name, name)
}
