package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/provision"
)

// profileSep joins a profile field and a path inside the profile in a
// sweep's path: "provision.switch_profile:ecn.3.kmin_bytes". No scenario
// key holds a colon, so the two kinds of path cannot be mistaken.
const profileSep = ":"

// profileKind is a scenario field naming a profile file that a sweep can
// reach into: the profile's schema and its loader's rules.
type profileKind struct {
	field  string                     // "provision.switch_profile"
	schema reflect.Type               // what the file decodes into
	parse  func([]byte, string) error // the profile loader's rules, from bytes
	ref    func(*Provision) *string
	// archive is the derived profile's kind in provision/<variant>/
	// (archive.Provisioning.DerivedProfile).
	archive string
}

// profileKinds are the profile fields, in the order variants derive them.
func profileKinds() []profileKind {
	return []profileKind{
		{field: "provision.switch_profile", schema: reflect.TypeOf(provision.QoSProfile{}),
			parse:   func(b []byte, f string) error { _, err := provision.ParseQoSProfile(b, f); return err },
			ref:     func(p *Provision) *string { return &p.SwitchProfile },
			archive: "switch"},
		{field: "provision.rnic_profile", schema: reflect.TypeOf(connectx.Profile{}),
			parse:   func(b []byte, f string) error { _, err := connectx.ParseProfile(b, f); return err },
			ref:     func(p *Provision) *string { return &p.RNICProfile },
			archive: "rnic"},
	}
}

func profileKindOf(field string) (profileKind, bool) {
	for _, k := range profileKinds() {
		if k.field == field {
			return k, true
		}
	}
	return profileKind{}, false
}

// DerivedProfile is a profile file of a variant with the values of the
// matrix's sweeps inside it set: the file's YAML with those nodes
// replaced, checked as the profile's loader checks a file.
type DerivedProfile struct {
	// Field is the provision field it stands in for
	// (provision.switch_profile or provision.rnic_profile).
	Field string `json:"field"`
	Base  string `json:"base"` // the file it derives from, resolved
	YAML  []byte `json:"yaml"`
	// Emulation: it comes from the emulation section (emulation.rnic),
	// which a hardware lab ignores.
	Emulation bool `json:"emulation,omitempty"`
}

// profilePath splits a sweep's path at the colon into the profile kind and
// the steps inside the profile; ok is false for a path of the scenario.
func profilePath(p string) (kind profileKind, inner []step, ok bool, err error) {
	field, in, found := strings.Cut(p, profileSep)
	if !found {
		return kind, nil, false, nil
	}
	kind, known := profileKindOf(field)
	if !known {
		return kind, nil, true, fmt.Errorf("bad path %q: only provision.switch_profile and provision.rnic_profile name a profile a sweep can reach into (e.g. provision.switch_profile:ecn.3.kmin_bytes)", p)
	}
	if in == "" {
		return kind, nil, true, fmt.Errorf("bad path %q: name a field of the profile after %q (e.g. %s:ecn.3.kmin_bytes)", p, profileSep, field)
	}
	if inner, err = parseSteps(in); err != nil {
		return kind, nil, true, err
	}
	if _, err = fieldType(kind.schema, inner); err != nil {
		return kind, nil, true, fmt.Errorf("in the profile: %w", err)
	}
	return kind, inner, true, nil
}

// checkProfileSweep checks a sweep inside a profile against the scenario:
// the profile field must name a file, here or in another sweep.
func (s *Scenario) checkProfileSweep(kind profileKind, at string, ps *yamlpos.Problems) {
	p := s.Provision
	if *kind.ref(&p) == "" && !s.Sweeps(kind.field) {
		s.ix.Add(ps, at+".path", "%s names no file: a sweep inside a profile needs the scenario (or another sweep) to name one", kind.field)
	}
}

// deriveProfiles gives v, the combination idx of the matrix, the profiles
// its sweeps reach into: per profile, the file the variant names with
// every such sweep's value set in it (in matrix order), checked by the
// profile's loader. A file that cannot be read or is invalid in itself is
// a problem at the field naming it; a derived profile the loader refuses
// is one at the value that caused it.
func (s *Scenario) deriveProfiles(v *Variant, idx []int) yamlpos.Problems {
	var ps yamlpos.Problems
	for _, kind := range profileKinds() {
		var sweeps []int
		var inners [][]step
		for i, w := range s.Matrix {
			if k, inner, ok, _ := profilePath(w.Path); ok && k.field == kind.field {
				sweeps, inners = append(sweeps, i), append(inners, inner)
			}
		}
		if len(sweeps) == 0 {
			continue
		}
		name := *kind.ref(&v.Scenario.Provision)
		if name == "" {
			s.ix.Add(&ps, fmt.Sprintf("matrix[%d].path", sweeps[0]), "%s names no file in variant %s", kind.field, v.Label)
			continue
		}
		file := v.Scenario.resolve(name)
		data, err := os.ReadFile(file)
		if err == nil {
			err = kind.parse(data, file)
		}
		if err != nil {
			s.ix.Add(&ps, kind.field, "a sweep reaches into this profile, which cannot be used: %v", err)
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
			s.ix.Add(&ps, kind.field, "%s: %v", file, err) // the loader read it: not reached
			continue
		}
		failed := false
		set := []string{"derived by the matrix from " + name + ":"}
		for n, i := range sweeps {
			val := &s.Matrix[i].Values[idx[i]]
			if err := setNode(doc.Content[0], inners[n], plainCopy(val)); err != nil {
				s.ix.Add(&ps, fmt.Sprintf("matrix[%d].path", i), "%s: in %s: %v", s.Matrix[i].Path, name, err)
				failed = true
			}
			set = append(set, fmt.Sprintf("  %s = %s", pathString(inners[n]), strings.ReplaceAll(nodeText(val), "\n", `\n`)))
		}
		if failed {
			continue
		}
		// The archived copy says where it comes from, above the file's
		// own head comment.
		doc.HeadComment = strings.TrimSpace(strings.Join(set, "\n") + "\n" + doc.HeadComment)
		out, err := marshal(&doc)
		if err == nil {
			err = kind.parse(out, file)
		}
		if err != nil {
			ps = append(ps, s.atSweepValues(err, sweeps, inners, idx)...)
			continue
		}
		v.Profiles = append(v.Profiles, DerivedProfile{Field: kind.field, Base: file, YAML: out})
	}
	return ps
}

// atSweepValues places the loader's complaints about a derived profile at
// the values that made it: each at the sweep whose field it is about (or
// lies in or around), else at the first sweep into the profile, naming the
// values of the other sweeps into it.
func (s *Scenario) atSweepValues(err error, sweeps []int, inners [][]step, idx []int) yamlpos.Problems {
	var found yamlpos.Problems
	if !errors.As(err, &found) {
		found = yamlpos.Problems{{Msg: err.Error()}}
	}
	var ps yamlpos.Problems
	for _, f := range found {
		n := 0
		for k, inner := range inners {
			sp := pathString(inner)
			if within(f.Field, sp) || within(sp, f.Field) {
				n = k
				break
			}
		}
		i := sweeps[n]
		node := &s.Matrix[i].Values[idx[i]]
		msg := f.Msg
		if f.Field != "" && f.Field != pathString(inners[n]) {
			msg = f.Field + ": " + msg
		}
		var with []string // the other values in the same profile: the combination
		for _, j := range sweeps {
			if j != i {
				with = append(with, s.Matrix[j].ParamName()+"="+nodeText(&s.Matrix[j].Values[idx[j]]))
			}
		}
		if len(with) > 0 {
			msg += " (with " + strings.Join(with, ", ") + ")"
		}
		ps = append(ps, yamlpos.Problem{File: s.ix.File, Line: node.Line,
			Field: fmt.Sprintf("matrix[%d].values[%d]", i, idx[i]),
			Msg:   fmt.Sprintf("%s = %s: %s", s.Matrix[i].Path, nodeText(node), msg)})
	}
	return ps
}

// marshal writes a YAML document indented as profiles are written.
func marshal(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	err := enc.Close()
	return b.Bytes(), err
}

// nodeText is a value as problems quote it: a scalar as written, else its
// tag.
func nodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return "(" + n.Tag + ")"
}

// setNode sets the node steps lead to below n to val, adding mapping keys
// on the way; a list index must exist.
func setNode(n *yaml.Node, steps []step, val *yaml.Node) error {
	for i, st := range steps {
		for n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		last := i == len(steps)-1
		at := pathString(steps[:i])
		if st.key == "" {
			if n.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s is not a list", at)
			}
			if st.index >= len(n.Content) {
				return fmt.Errorf("index [%d] is past the %d entries of %s", st.index, len(n.Content), at)
			}
			if last {
				n.Content[st.index] = val
				return nil
			}
			n = n.Content[st.index]
			continue
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" { // "ecn:" with nothing under it
			*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is %s, not a mapping", at, describeNode(n))
		}
		k := -1
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == st.key {
				k = j
			}
		}
		if k < 0 { // a key the file leaves out: add it
			if !last && steps[i+1].key == "" {
				return fmt.Errorf("%s has no list %s to index", at, st.key)
			}
			child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.key}, child)
			k = len(n.Content) - 2
		}
		if last {
			n.Content[k+1] = val
			return nil
		}
		n = n.Content[k+1]
	}
	return errors.New("an empty path") // profilePath refuses these
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.SequenceNode:
		return "a list"
	}
	return "not a value"
}

// plainCopy deep-copies a matrix value without its comments, which belong
// to the scenario file, not the profile.
func plainCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = plainCopy(ch)
	}
	return &c
}
