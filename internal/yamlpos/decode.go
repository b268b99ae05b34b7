package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode parses a YAML file strictly into v and returns the index for the
// semantic checks that follow. Whatever yaml.v3 refuses comes back as
// Problems, each file:line: field: message: a file past the limits (Parse),
// a syntax error at its line, a
// value of the wrong type with what the field wants, an unknown key with
// the keys known there, a key given twice. It is the one strict decode
// every labctl YAML loader uses.
func Decode(data []byte, file string, v any) (*Index, error) {
	root, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	ix := New(file, root)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err = dec.Decode(v)
	if errors.Is(err, io.EOF) {
		return nil, Problems{{File: file, Msg: "the file is empty"}}
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var ps Problems
		for _, msg := range te.Errors {
			ps = append(ps, typeProblem(file, msg, ix.entries, reflect.TypeOf(v)))
		}
		return nil, ps.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return ix, nil
}

var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError is a parse error as file:line: message.
func syntaxError(file string, err error) error {
	if m := syntaxLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problems{{File: file, Line: line, Msg: m[2]}}
	}
	return Problems{{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
}

var (
	unknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type (.+)$`)
	twiceField   = regexp.MustCompile(`^line (\d+): field (.+) already set in type (.+)$`)
	twiceKey     = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)
	wrongType    = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	anyLine      = regexp.MustCompile(`^line (\d+): (.*)$`)
)

// typeProblem turns one of yaml.v3's TypeError lines into a Problem that
// names the field written on that line.
func typeProblem(file, msg string, es []entry, root reflect.Type) Problem {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	byKey := func(line int, key string) string {
		for _, e := range es {
			if e.key != nil && e.key.Line == line && e.key.Value == key {
				return e.path
			}
		}
		return key
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		line := atoi(m[1])
		field := byKey(line, m[2])
		text := "unknown field"
		if known := Keys(typeAt(root, parent(field))); len(known) > 0 {
			text += " (known here: " + strings.Join(known, ", ") + ")"
		}
		return Problem{File: file, Line: line, Field: field, Msg: text}
	}
	if m := twiceField.FindStringSubmatch(msg); m != nil {
		line := atoi(m[1])
		return Problem{File: file, Line: line, Field: byKey(line, m[2]), Msg: "given twice"}
	}
	if m := twiceKey.FindStringSubmatch(msg); m != nil {
		line := atoi(m[1])
		return Problem{File: file, Line: line, Field: byKey(line, m[2]), Msg: "given twice (first at line " + m[3] + ")"}
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		line, tag, val, into := atoi(m[1]), m[2], m[3], m[4]
		return Problem{File: file, Line: line, Field: valueField(es, line, tag, val),
			Msg: "want " + describeGoType(into) + ", got " + describeYAML(tag, val)}
	}
	if m := anyLine.FindStringSubmatch(msg); m != nil {
		return Problem{File: file, Line: atoi(m[1]), Msg: m[2]}
	}
	return Problem{File: file, Msg: msg}
}

// valueField finds the field whose value (or key) yaml.v3 could not
// decode: the deepest one on that line whose text matches.
func valueField(es []entry, line int, tag, val string) string {
	matches := func(n *yaml.Node) bool {
		if n == nil || n.Line != line {
			return false
		}
		switch tag {
		case "seq":
			return n.Kind == yaml.SequenceNode
		case "map":
			return n.Kind == yaml.MappingNode
		}
		if v, ok := strings.CutSuffix(val, "..."); ok { // yaml.v3 shortens long values
			return n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, v)
		}
		return n.Kind == yaml.ScalarNode && n.Value == val
	}
	field := ""
	for _, e := range es {
		if matches(e.val) || matches(e.key) {
			field = e.path // later entries are deeper
		}
	}
	return field
}

// describeGoType says in words what a Go type (as yaml.v3 names it) takes.
func describeGoType(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case t == "time.Duration":
		return "a duration (e.g. 500ms, 2s)"
	case strings.HasPrefix(t, "["):
		return "a list"
	}
	return "a mapping" // maps and structs
}

// describeYAML says what was written, from yaml.v3's tag and value.
func describeYAML(tag, val string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "str":
		return strconv.Quote(val)
	}
	return val
}

// typeAt is the Go type at a field path below t (nil if the path leaves
// the types: an interface, a custom decoder, a key with a dot in it).
func typeAt(t reflect.Type, path string) reflect.Type {
	for _, step := range splitPath(path) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == nil:
			return nil
		case strings.HasPrefix(step, "["):
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return nil
			}
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			t = fieldType(t, step)
		default:
			return nil
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part[1:], '[') + 1
			if i == 0 {
				out = append(out, part)
				break
			}
			out = append(out, part[:i])
			part = part[i:]
		}
	}
	return out
}

// field is one YAML key of a struct and its field (whose Index leads
// from the struct through inline ones).
type field struct {
	name string
	f    reflect.StructField
}

// fieldsOf lists the YAML keys of struct t, inline structs' included, as
// yaml.v3 names them (none if t is not a struct).
func fieldsOf(t reflect.Type) []field {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		n, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || n == "-":
		case strings.Contains(opts, "inline"):
			for _, in := range fieldsOf(f.Type) {
				in.f.Index = append(append([]int(nil), f.Index...), in.f.Index...)
				out = append(out, in)
			}
		case n == "":
			out = append(out, field{strings.ToLower(f.Name), f})
		default:
			out = append(out, field{n, f})
		}
	}
	return out
}

// Field is struct t's field with YAML key name, inline structs' included
// (a profile's OrOff entries hold their value inline); its Index leads
// from t.
func Field(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range fieldsOf(t) {
		if f.name == name {
			return f.f, true
		}
	}
	return reflect.StructField{}, false
}

// fieldType is the type of struct t's field with YAML key name, nil if
// none.
func fieldType(t reflect.Type, name string) reflect.Type {
	if f, ok := Field(t, name); ok {
		return f.Type
	}
	return nil
}

// Keys lists the YAML keys of struct t.
func Keys(t reflect.Type) []string {
	var out []string
	for _, f := range fieldsOf(t) {
		out = append(out, f.name)
	}
	return out
}
