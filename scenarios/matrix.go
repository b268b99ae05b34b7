package scenarios

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/reports"
)

// Sweep is one entry of a scenario's matrix: a field, by its path in the
// scenario ("emulation.lb", "traffic[0].load", "provision.switch_profile",
// "lab") or inside a profile the scenario names
// ("provision.switch_profile:ecn.3.kmin_bytes", see profilesweep.go), and
// the values it takes. Name is the parameter's name in point names and
// PointMeta.Params; by default the last key of the path, with the
// comparison axes given their well-known names (lb and image -> scheme,
// load -> load, cdf -> workload).
type Sweep struct {
	Path   string      `yaml:"path" json:"path"`
	Name   string      `yaml:"name,omitempty" json:"name,omitempty"`
	Values []yaml.Node `yaml:"values" json:"-"`
	// Labels, when given, name the values one for one in point names and
	// the manifest's params: a value that is a whole section ({lb:
	// letflow, lb_params: {timeout_us: "10"}}) then reads "letflow-10us".
	Labels []string `yaml:"labels,omitempty" json:"labels,omitempty"`
}

// maxVariants bounds a matrix's cross product.
const maxVariants = 10000

// Variant is one combination of a matrix's values: the scenario with them
// set, the values by sweep name, and the traffic entries it runs.
type Variant struct {
	Scenario *Scenario
	// Params are the swept values by name, in Names order.
	Params map[string]any
	Names  []string
	// Label is "name=value/..." in sweep order ("" without a matrix); it
	// names the variant's stages and provisioning records.
	Label string
	// Entries are the traffic entries the variant runs, in order.
	Entries []Entry
	// Profiles are the variant's profiles with the values of the sweeps
	// inside them set, one per profile such sweeps reach into; the
	// runner applies them instead of the files the scenario names.
	Profiles []DerivedProfile
}

// Entry is a traffic entry as one variant runs it. A sweep of traffic[i]
// (or of a field inside it) applies to entry i alone: the other entries
// run once per combination of the sweeps that do apply to them (in the
// first variant that has it), and neither the value nor its name appears
// in their points.
type Entry struct {
	Index int // in Scenario.Traffic
	// Params and Label are the variant's, restricted to the sweeps that
	// apply to the entry; point names end with the label.
	Params map[string]any
	Label  string
}

// ParamName is a sweep's name (see Sweep).
func (w Sweep) ParamName() string {
	if w.Name != "" {
		return w.Name
	}
	if _, inner, ok, err := profilePath(w.Path); ok {
		for i := len(inner) - 1; err == nil && i >= 0; i-- {
			if inner[i].key != "" {
				return inner[i].key // ecn.3.kmin_bytes -> kmin_bytes; pfc_priorities[0] -> pfc_priorities
			}
		}
		return w.Path
	}
	steps, err := parsePath(w.Path)
	if err != nil || len(steps) == 0 {
		return w.Path
	}
	switch last := steps[len(steps)-1].key; last {
	case "lb", "image":
		return reports.ParamScheme
	case "cdf":
		return reports.ParamWorkload
	case "load":
		return reports.ParamLoad
	case "":
		return w.Path
	default:
		return last
	}
}

// Variants expands the matrix: the cross product of the sweeps' values in
// the order given (the first sweep varies slowest), each a validated copy
// of s. A scenario without a matrix is its own single variant. Problems
// caused by a swept value are reported at the value in the matrix
// ("file:line: matrix[i].values[j]: path = value: message").
func (s *Scenario) Variants() ([]Variant, error) {
	if len(s.Matrix) == 0 {
		v := Variant{Scenario: s, Params: map[string]any{}}
		for i := range s.Traffic {
			v.Entries = append(v.Entries, Entry{Index: i, Params: map[string]any{}})
		}
		if ps := append(v.foldRNIC(), v.foldHostLB()...); len(ps) > 0 {
			return nil, ps.Err()
		}
		return []Variant{v}, nil
	}
	var ps yamlpos.Problems
	if s.checkSweeps(&ps); len(ps) > 0 {
		return nil, ps.Err()
	}
	n := 1
	for _, w := range s.Matrix {
		n *= len(w.Values)
	}
	out := make([]Variant, 0, n)
	seen := map[string][]string{} // problem -> variants that have it
	var order []yamlpos.Problem
	for k := 0; k < n; k++ {
		v, idx, err := s.variant(k)
		if err != nil {
			return nil, err
		}
		probs := append(v.Scenario.validate(s.ix), s.deriveProfiles(&v, idx)...)
		probs = append(probs, v.foldRNIC()...)
		for _, p := range append(probs, v.foldHostLB()...) {
			p = s.placeInMatrix(p, idx)
			key := p.String()
			if _, ok := seen[key]; !ok {
				order = append(order, p)
			}
			seen[key] = append(seen[key], v.Label)
		}
		out = append(out, v)
	}
	for _, p := range order {
		// A problem only some variants have is a combination: name one.
		if labels := seen[p.String()]; len(labels) < n && !strings.HasPrefix(p.Field, "matrix[") {
			p.Msg += " (in variant " + labels[0] + ")"
		}
		ps = append(ps, p)
	}
	if len(ps) > 0 {
		return nil, ps.Err()
	}
	return out, nil
}

// checkSweeps checks the matrix itself: paths, names, value types.
func (s *Scenario) checkSweeps(ps *yamlpos.Problems) {
	names := map[string]bool{}
	n := 1
	for i, w := range s.Matrix {
		at := fmt.Sprintf("matrix[%d]", i)
		kind, _, inProfile, err := profilePath(w.Path)
		var steps []step
		var typ reflect.Type
		switch {
		case inProfile && err == nil:
			s.checkProfileSweep(kind, at, ps)
		case err == nil:
			steps, err = parsePath(w.Path)
			if err == nil {
				typ, err = fieldType(reflect.TypeOf(Scenario{}), steps)
			}
			if err == nil { // the indexes must exist
				err = setPath(reflect.ValueOf(s.clone()).Elem(), steps, nil)
			}
		}
		if err != nil {
			s.ix.Add(ps, at+".path", "%v", err)
			continue
		}
		if len(w.Values) == 0 {
			s.ix.Add(ps, at+".values", "a sweep needs at least one value")
			continue
		}
		if len(w.Labels) > 0 && len(w.Labels) != len(w.Values) {
			s.ix.Add(ps, at+".labels", "%d labels for %d values: give one per value", len(w.Labels), len(w.Values))
		}
		for j, l := range w.Labels {
			if bad := runNameProblem("a label names points and files", l); bad != "" {
				s.ix.Add(ps, fmt.Sprintf("%s.labels[%d]", at, j), "%s", bad)
			}
		}
		if name := w.ParamName(); names[name] {
			s.ix.Add(ps, at+".name", "two sweeps are named %q: give one a name", name)
		} else if name == paramTraffic && len(s.Traffic) > 1 {
			s.ix.Add(ps, at+".name", "%q names the traffic entry of a scenario with several: give the sweep another name", name)
		} else {
			names[name] = true
		}
		for j := range w.Values {
			if inProfile {
				break // deriveProfiles checks them, with the profile's loader
			}
			err := unknownKeys(&w.Values[j], typ)
			if err == nil {
				err = setPath(reflect.ValueOf(s.clone()).Elem(), steps, &w.Values[j])
			}
			if err != nil {
				s.ix.Add(ps, fmt.Sprintf("%s.values[%d]", at, j), "%s: %v", w.Path, err)
			}
		}
		n *= len(w.Values)
	}
	if n > maxVariants {
		s.ix.Add(ps, "matrix", "%d combinations; at most %d are allowed", n, maxVariants)
	}
}

// unknownKeys refuses mapping keys a struct-typed value does not have, as
// the scenario's own decoding does (a node's Decode would drop them).
func unknownKeys(n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f, ok := yamlpos.Field(t, n.Content[i].Value)
		if !ok {
			return fmt.Errorf("line %d: field %s not found in type %s", n.Content[i].Line, n.Content[i].Value, t.Name())
		}
		if err := unknownKeys(n.Content[i+1], f.Type); err != nil {
			return err
		}
	}
	return nil
}

// variant builds the k-th combination (mixed radix over the sweeps, the
// last sweep varying fastest) and returns the value index per sweep.
func (s *Scenario) variant(k int) (Variant, []int, error) {
	c := s.clone()
	idx := make([]int, len(s.Matrix))
	for i := len(s.Matrix) - 1; i >= 0; i-- {
		idx[i] = k % len(s.Matrix[i].Values)
		k /= len(s.Matrix[i].Values)
	}
	v := Variant{Scenario: c, Params: map[string]any{}}
	var label []string
	entry := make([]int, len(s.Matrix)) // the traffic entry each sweep is confined to, or -1
	for i, w := range s.Matrix {
		node := &w.Values[idx[i]]
		val, steps, err := c.setSwept(w.Path, node)
		if err != nil {
			return v, nil, err
		}
		name := w.ParamName()
		switch {
		case len(w.Labels) == len(w.Values):
			val = w.Labels[idx[i]] // the value's name, in place of the value
		case name == reports.ParamWorkload:
			val = labelValue(val) // a CDF file is named like a shipped one
		}
		v.Params[name], v.Names = val, append(v.Names, name)
		label = append(label, name+"="+labelValue(val))
		entry[i] = trafficEntry(steps)
	}
	v.Label = strings.Join(label, "/")
	for j := range c.Traffic {
		e := Entry{Index: j, Params: map[string]any{}}
		var el []string
		runs := true
		for i, name := range v.Names {
			switch entry[i] {
			case -1, j:
				e.Params[name] = v.Params[name]
				el = append(el, label[i])
			default: // another entry's sweep: run j at its first value only
				runs = runs && idx[i] == 0
			}
		}
		if runs {
			e.Label = strings.Join(el, "/")
			v.Entries = append(v.Entries, e)
		}
	}
	return v, idx, nil
}

// setSwept sets a sweep's value in c, a variant's scenario, and returns it
// as a parameter, in the field's type (a load is a float64 even when
// written as 1), with the path's steps in the scenario. A sweep inside a
// profile sets nothing here (deriveProfiles does): its value has the
// profile field's type when it is a scalar of it, else it is as written.
func (c *Scenario) setSwept(path string, node *yaml.Node) (any, []step, error) {
	if kind, inner, ok, _ := profilePath(path); ok { // checked by checkSweeps
		typ, _ := fieldType(kind.schema, inner)
		pv := reflect.New(typ)
		if node.Kind == yaml.ScalarNode && node.Decode(pv.Interface()) == nil && pv.Elem().Kind() != reflect.Struct {
			return deref(pv.Elem()), nil, nil
		}
		var val any
		err := node.Decode(&val)
		return val, nil, err
	}
	steps, _ := parsePath(path) // checked by checkSweeps
	if err := setPath(reflect.ValueOf(c).Elem(), steps, node); err != nil {
		return nil, nil, err
	}
	typ, _ := fieldType(reflect.TypeOf(Scenario{}), steps)
	pv := reflect.New(typ)
	if err := node.Decode(pv.Interface()); err != nil {
		return nil, nil, err
	}
	return deref(pv.Elem()), steps, nil
}

// deref is v's value through any pointers.
func deref(v reflect.Value) any {
	val := v.Interface()
	for e := v; e.Kind() == reflect.Pointer && !e.IsNil(); e = e.Elem() {
		val = e.Elem().Interface()
	}
	return val
}

// trafficEntry is the traffic entry a sweep's path is confined to
// (traffic[i] or a field inside it), or -1 for a sweep of anything else.
func trafficEntry(steps []step) int {
	if len(steps) >= 2 && steps[0].key == "traffic" && steps[1].key == "" {
		return steps[1].index
	}
	return -1
}

// placeInMatrix moves a problem about a swept field to the value in the
// matrix that caused it.
func (s *Scenario) placeInMatrix(p yamlpos.Problem, idx []int) yamlpos.Problem {
	for i, w := range s.Matrix {
		if within(p.Field, w.Path) {
			node := &w.Values[idx[i]]
			p.Line = node.Line
			val := node.Value
			if node.Kind != yaml.ScalarNode {
				val = "(" + node.Tag + ")"
			}
			p.Msg = fmt.Sprintf("%s = %s: %s", p.Field, val, p.Msg)
			p.Field = fmt.Sprintf("matrix[%d].values[%d]", i, idx[i])
			return p
		}
	}
	return p
}

// labelValue is a value as it appears in point names: files by their base
// name without extension, no slashes or spaces.
func labelValue(v any) string {
	s := fmt.Sprint(v)
	if strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".cdf") {
		s = strings.TrimSuffix(filepath.Base(s), filepath.Ext(s))
	}
	return strings.NewReplacer("/", "_", " ", "_").Replace(s)
}

// clone deep-copies s through YAML (every schema field has a YAML name),
// all but the matrix, which variants do not carry.
func (s *Scenario) clone() *Scenario {
	noMatrix := *s
	noMatrix.Matrix = nil
	b, err := yaml.Marshal(&noMatrix)
	if err != nil {
		panic(fmt.Sprintf("scenario %s: clone: %v", s.Name, err)) // the schema always marshals
	}
	c := &Scenario{}
	if err := yaml.Unmarshal(b, c); err != nil {
		panic(fmt.Sprintf("scenario %s: clone: %v", s.Name, err))
	}
	c.File, c.ix = s.File, s.ix
	return c
}

// step is one element of a field path: a key or an index.
type step struct {
	key   string
	index int // when key == ""
}

// parsePath splits "traffic[0].load" into traffic, [0], load: a field of
// the scenario a sweep may set.
func parsePath(p string) ([]step, error) {
	if p == "" {
		return nil, errors.New("a sweep needs a path, e.g. emulation.lb or traffic[0].load")
	}
	if strings.Contains(p, profileSep) {
		return nil, fmt.Errorf("bad path %q: %q follows only a profile field (provision.switch_profile or provision.rnic_profile)", p, profileSep)
	}
	out, err := parseSteps(p)
	if err != nil {
		return nil, err
	}
	switch out[0].key {
	case "name", "matrix", "repetitions":
		return nil, fmt.Errorf("%s cannot be swept", out[0].key)
	}
	return out, nil
}

// parseSteps splits a field path, keys joined with dots and indexes in
// brackets, into its steps.
func parseSteps(p string) ([]step, error) {
	var out []step
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && (len(out) == 0 || rest == "") {
			return nil, fmt.Errorf("bad path %q", p)
		}
		if key != "" {
			out = append(out, step{key: key})
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("bad index in path %q", p)
			}
			out = append(out, step{index: i})
			if after == "" {
				break
			}
			rest, ok = strings.CutPrefix(after, "[")
			if !ok {
				return nil, fmt.Errorf("bad path %q", p)
			}
		}
	}
	return out, nil
}

// fieldType follows steps through the schema's types by YAML name.
func fieldType(t reflect.Type, steps []step) (reflect.Type, error) {
	for i, st := range steps {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case st.key == "" && t.Kind() == reflect.Slice:
			t = t.Elem()
		case st.key != "" && t.Kind() == reflect.Map:
			if k := t.Key().Kind(); k >= reflect.Int && k <= reflect.Int64 {
				if _, err := strconv.Atoi(st.key); err != nil {
					return nil, fmt.Errorf("%s is keyed by numbers, not %q", pathString(steps[:i]), st.key)
				}
			}
			t = t.Elem()
		case st.key != "" && t.Kind() == reflect.Struct:
			f, ok := yamlpos.Field(t, st.key)
			if !ok {
				return nil, fmt.Errorf("no field %q at %s (it has %s)", st.key, pathString(steps[:i]), strings.Join(yamlpos.Keys(t), ", "))
			}
			t = f.Type
		default:
			return nil, fmt.Errorf("%s cannot be indexed by %s", pathString(steps[:i]), pathString(steps[i:i+1]))
		}
	}
	return t, nil
}

// setPath decodes node into the field steps lead to in v, creating maps
// and pointers on the way; an index must exist.
func setPath(v reflect.Value, steps []step, node *yaml.Node) error {
	if len(steps) == 0 {
		if node == nil { // only following the path
			return nil
		}
		nv := reflect.New(v.Type())
		if err := node.Decode(nv.Interface()); err != nil {
			return typeError(err)
		}
		v.Set(nv.Elem())
		return nil
	}
	st := steps[0]
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return setPath(v.Elem(), steps, node)
	case reflect.Struct:
		f, ok := yamlpos.Field(v.Type(), st.key)
		if !ok {
			return fmt.Errorf("no field %q", st.key)
		}
		return setPath(v.FieldByIndex(f.Index), steps[1:], node)
	case reflect.Slice:
		if st.key != "" || st.index >= v.Len() {
			return fmt.Errorf("index [%d] is past the %d entries the scenario has", st.index, v.Len())
		}
		return setPath(v.Index(st.index), steps[1:], node)
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		k := reflect.ValueOf(st.key)
		e := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			e.Set(old)
		}
		if err := setPath(e, steps[1:], node); err != nil {
			return err
		}
		v.SetMapIndex(k, e)
		return nil
	}
	return fmt.Errorf("cannot set %s", pathString(steps))
}

// typeError shortens yaml.v3's "line N: cannot unmarshal !!str `x` into
// float64" to what a person needs; the line is the problem's own.
func typeError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
			msg = rest
		}
		return errors.New(msg)
	}
	return err
}

func pathString(steps []step) string {
	var b strings.Builder
	for _, st := range steps {
		if st.key == "" {
			fmt.Fprintf(&b, "[%d]", st.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.key)
	}
	if b.Len() == 0 {
		return "the scenario"
	}
	return b.String()
}

// Sweeps says whether the matrix sets the field at path (or inside it).
func (s *Scenario) Sweeps(path string) bool {
	for _, w := range s.Matrix {
		if within(w.Path, path) {
			return true
		}
	}
	return false
}

// within says whether field path p is path or lies inside it.
func within(p, path string) bool {
	return p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[")
}
