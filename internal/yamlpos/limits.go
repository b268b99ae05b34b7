package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Limits on a YAML file, checked before anything decodes it: a lab, a
// scenario or a profile is a few kilobytes, so a file past these is a
// mistake or an attack, and must be refused in milliseconds rather than
// take the machine's memory (an alias "bomb" of a few hundred bytes
// expands to billions of nodes).
const (
	MaxFileBytes = 4 << 20 // a file's size
	MaxDepth     = 64      // nesting of mappings and sequences
	MaxNodes     = 200_000 // nodes once every alias is expanded (a 1,024-host lab file has ~50k)
)

// Parse reads data as exactly one YAML document within the limits and
// returns its node tree. Errors are Problems (file:line: message).
func Parse(data []byte, file string) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, Problems{{File: file, Msg: fmt.Sprintf("the file is %d bytes, over labctl's limit of %d MiB for a YAML file", len(data), MaxFileBytes>>20)}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(file, err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, err)
	default:
		return nil, Problems{{File: file, Line: second.Line, Msg: "a second YAML document starts here: labctl reads one document per file"}}
	}
	w := walker{file: file, size: map[*yaml.Node]int{}}
	if _, err := w.count(&root, 0); err != nil {
		return nil, err
	}
	return &root, nil
}

// walker counts a tree's nodes with aliases expanded, each anchor's
// subtree counted once and reused (so the count itself stays linear).
type walker struct {
	file string
	size map[*yaml.Node]int
}

func (w *walker) count(n *yaml.Node, depth int) (int, error) {
	if n == nil {
		return 0, nil
	}
	if depth > MaxDepth {
		return 0, Problems{{File: w.file, Line: n.Line, Msg: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}}
	}
	if s, ok := w.size[n]; ok {
		return s, nil
	}
	total := 1
	if n.Kind == yaml.AliasNode {
		s, err := w.count(n.Alias, depth)
		if err != nil {
			return 0, err
		}
		total = s
	}
	for _, c := range n.Content {
		s, err := w.count(c, depth+1)
		if err != nil {
			return 0, err
		}
		if total += s; total > MaxNodes {
			break
		}
	}
	if total > MaxNodes {
		return 0, Problems{{File: w.file, Line: n.Line, Msg: fmt.Sprintf("aliases expand the document past %d nodes", MaxNodes)}}
	}
	w.size[n] = total
	return total, nil
}
