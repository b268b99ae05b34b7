package yamlpos

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Index is a field-path -> line map for one file.
type Index struct {
	File    string
	lines   map[string]int
	entries []entry // every key and list item, in document order
}

// entry is one key or list item of the document: its field path, its key
// node (nil for list items) and its value.
type entry struct {
	path     string
	key, val *yaml.Node
}

// New indexes the document in root (as returned by yaml.Unmarshal into a
// yaml.Node).
func New(file string, root *yaml.Node) *Index {
	ix := &Index{File: file, lines: map[string]int{}}
	if root != nil && root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	ix.walk("", root)
	return ix
}

func (ix *Index) walk(path string, n *yaml.Node) {
	if n == nil {
		return
	}
	if path != "" {
		if _, ok := ix.lines[path]; !ok {
			ix.lines[path] = n.Line
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			ix.lines[p] = k.Line
			ix.entries = append(ix.entries, entry{p, k, v})
			ix.walk(p, v)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			ix.entries = append(ix.entries, entry{p, nil, c})
			ix.walk(p, c)
		}
	case yaml.AliasNode:
		ix.walk(path, n.Alias)
	}
}

// Has reports whether the document writes path itself (a key, even one
// whose value is the zero that leaving it out would also give).
func (ix *Index) Has(path string) bool {
	if ix == nil {
		return false
	}
	_, ok := ix.lines[path]
	return ok
}

// Line returns the line of path, or of its nearest indexed parent, or 0.
func (ix *Index) Line(path string) int {
	if ix == nil {
		return 0
	}
	for p := path; p != ""; p = parent(p) {
		if l, ok := ix.lines[p]; ok {
			return l
		}
	}
	return 0
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// Problem is one finding in a YAML file.
type Problem struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Field string `json:"field"`
	Msg   string `json:"msg"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of findings; it is an error when non-empty.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "\n")
}

// Add records a problem at path.
func (ix *Index) Add(ps *Problems, path, format string, args ...any) {
	file := ""
	if ix != nil {
		file = ix.File
	}
	*ps = append(*ps, Problem{File: file, Line: ix.Line(path), Field: path, Msg: fmt.Sprintf(format, args...)})
}

// Err returns ps sorted by line as an error, or nil if empty.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps
}
