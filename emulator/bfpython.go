package emulator

import (
	"fmt"
	"strconv"
	"strings"
)

// A small interpreter for the subset of bfrt_python that labctl's
// SDE-shell driver emits (drivers/tofino/sdescript.go): one statement per
// line, assignments, calls with literal or computed arguments, attribute
// access, subscripts, `>>`, print, and try/except blocks. Anything else is
// a SyntaxError, so a driver that starts emitting more fails its tests
// here rather than on a switch.

// Python values: int64, bool, string, pyBytes, []any, nil, *bfNode,
// *bfMethod, *bfEntry, bfDict.
type pyBytes string

type bfDict map[string]any // an entry's data, keyed by field name (bytes keys in Python)

type bfEntry struct{ data bfDict }

type bfNode struct{ path string } // a node of the bfrt tree ("" is bfrt itself)

type bfMethod struct {
	table *bfTable
	name  string
}

// pyError is a Python exception.
type pyError struct {
	Kind, Msg string
}

func (e *pyError) Error() string { return e.Kind + ": " + e.Msg }

func pyErr(kind, format string, args ...any) *pyError {
	return &pyError{kind, fmt.Sprintf(format, args...)}
}

// pyStr is what print shows of a value.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	case pyBytes:
		return "b'" + string(x) + "'"
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = pyRepr(e)
		}
		return "[" + strings.Join(s, ", ") + "]"
	case *bfEntry:
		return "<bfrtcli.TableEntry>"
	case bfDict:
		return "{...}"
	case *bfNode:
		return "<bfrtcli.BFNode " + x.path + ">"
	case *bfMethod:
		return "<bound method " + x.name + ">"
	}
	return fmt.Sprint(v)
}

func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return pyStr(v)
}

// --- statements ---

type bfStmt struct {
	line          int // 1-based
	src           string
	body, handler []bfStmt // try: body, except: handler
}

// parseScript splits a script into statements and try/except blocks
// (indentation by spaces, one level of nesting is all the driver uses but
// any depth parses).
func parseScript(src string) ([]bfStmt, error) {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	stmts, i, err := parseBlock(lines, 0, 0)
	if err == nil && i < len(lines) {
		err = pyErr("IndentationError", "unexpected indent (line %d)", i+1)
	}
	return stmts, err
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func blank(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#")
}

func parseBlock(lines []string, i, indent int) ([]bfStmt, int, error) {
	var out []bfStmt
	for i < len(lines) {
		if blank(lines[i]) {
			i++
			continue
		}
		in := indentOf(lines[i])
		if in < indent {
			return out, i, nil
		}
		if in > indent {
			return nil, i, pyErr("IndentationError", "unexpected indent (line %d)", i+1)
		}
		t := strings.TrimSpace(lines[i])
		if strings.ContainsRune(lines[i], '\t') {
			return nil, i, pyErr("TabError", "tabs are not used by labctl's scripts (line %d)", i+1)
		}
		if t != "try:" {
			out = append(out, bfStmt{line: i + 1, src: t})
			i++
			continue
		}
		st := bfStmt{line: i + 1, src: t}
		inner, j, err := blockAfter(lines, i+1, indent)
		if err != nil {
			return nil, j, err
		}
		st.body = inner
		for j < len(lines) && blank(lines[j]) {
			j++
		}
		if j >= len(lines) || indentOf(lines[j]) != indent || !isExcept(strings.TrimSpace(lines[j])) {
			return nil, j, pyErr("SyntaxError", "try without except (line %d)", i+1)
		}
		if st.handler, j, err = blockAfter(lines, j+1, indent); err != nil {
			return nil, j, err
		}
		out = append(out, st)
		i = j
	}
	return out, i, nil
}

func isExcept(t string) bool { return t == "except:" || t == "except Exception:" }

// blockAfter parses the indented block that follows a compound statement.
func blockAfter(lines []string, i, outer int) ([]bfStmt, int, error) {
	j := i
	for j < len(lines) && blank(lines[j]) {
		j++
	}
	if j >= len(lines) || indentOf(lines[j]) <= outer {
		return nil, j, pyErr("IndentationError", "expected an indented block (line %d)", i)
	}
	return parseBlock(lines, j, indentOf(lines[j]))
}

// --- tokens ---

type pyTok struct {
	kind byte // 'n' name, 'i' int, 's' str, 'b' bytes, 'p' punctuation, 0 end
	text string
	num  int64
}

func tokenize(s string) ([]pyTok, error) {
	var out []pyTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c == '#':
			i = len(s)
		case c == '\'' || c == '"' || (c == 'b' && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"')):
			kind := byte('s')
			if c == 'b' {
				kind, i = 'b', i+1
			}
			q := s[i]
			j := strings.IndexByte(s[i+1:], q)
			if j < 0 {
				return nil, pyErr("SyntaxError", "EOL while scanning string literal")
			}
			out = append(out, pyTok{kind: kind, text: s[i+1 : i+1+j]})
			i += j + 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			v, err := strconv.ParseInt(strings.ReplaceAll(s[i:j], "_", ""), 0, 64)
			if err != nil {
				return nil, pyErr("SyntaxError", "invalid number %q", s[i:j])
			}
			out = append(out, pyTok{kind: 'i', num: v, text: s[i:j]})
			i = j
		case isAlnum(c) || c == '_' || c == '$':
			j := i
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_' || s[j] == '$') {
				j++
			}
			out = append(out, pyTok{kind: 'n', text: s[i:j]})
			i = j
		case strings.HasPrefix(s[i:], ">>"):
			out = append(out, pyTok{kind: 'p', text: ">>"})
			i += 2
		case strings.IndexByte("()[],=.-", c) >= 0:
			out = append(out, pyTok{kind: 'p', text: string(c)})
			i++
		default:
			return nil, pyErr("SyntaxError", "invalid syntax at %q", s[i:])
		}
	}
	return append(out, pyTok{}), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// --- evaluation ---

// pyInterp runs statements against a switch's tables.
type pyInterp struct {
	sw    *bfSwitch
	vars  map[string]any
	print func(string)
	// failAt makes the statement on that line raise an injected error
	// (tests of the driver's rollback); 0: none.
	failAt int
}

func (in *pyInterp) run(stmts []bfStmt) (line int, err error) {
	for _, st := range stmts {
		if st.body == nil && st.handler == nil && st.src != "try:" {
			if st.line == in.failAt {
				return st.line, pyErr("BfRtTableError", "table operation failed: Hardware error (injected by the emulator)")
			}
			if err := in.exec(st.src); err != nil {
				return st.line, err
			}
			continue
		}
		if l, err := in.run(st.body); err != nil {
			if _, ok := err.(*pyError); !ok {
				return l, err
			}
			if l, err := in.run(st.handler); err != nil {
				return l, err
			}
		}
	}
	return 0, nil
}

var pyKeywords = map[string]bool{"import": true, "from": true, "for": true, "while": true, "if": true, "def": true,
	"class": true, "with": true, "return": true, "lambda": true, "del": true, "global": true}

type pyParser struct {
	toks []pyTok
	pos  int
	in   *pyInterp
}

// at is the token i places ahead; past the end it is the end token.
func (p *pyParser) at(i int) pyTok {
	if p.pos+i < len(p.toks) {
		return p.toks[p.pos+i]
	}
	return pyTok{}
}

func (p *pyParser) peek() pyTok { return p.at(0) }
func (p *pyParser) next() pyTok { t := p.at(0); p.pos++; return t }

func (p *pyParser) accept(text string) bool {
	if t := p.peek(); t.kind == 'p' && t.text == text {
		p.pos++
		return true
	}
	return false
}

func (p *pyParser) expect(text string) error {
	if !p.accept(text) {
		return pyErr("SyntaxError", "expected %q, got %q", text, p.peek().text)
	}
	return nil
}

func (in *pyInterp) exec(src string) error {
	toks, err := tokenize(src)
	if err != nil {
		return err
	}
	if t := toks[0]; t.kind == 'n' && pyKeywords[t.text] {
		return pyErr("SyntaxError", "%s: not part of the bfrt_python subset the emulator runs", t.text)
	}
	p := &pyParser{toks: toks, in: in}
	// assignment: NAME = expr
	if len(toks) > 2 && toks[0].kind == 'n' && toks[1].kind == 'p' && toks[1].text == "=" {
		p.pos = 2
		v, err := p.expr()
		if err != nil {
			return err
		}
		if p.peek().kind != 0 {
			return pyErr("SyntaxError", "invalid syntax after %q", src)
		}
		in.vars[toks[0].text] = v
		return nil
	}
	if _, err := p.expr(); err != nil {
		return err
	}
	if p.peek().kind != 0 {
		return pyErr("SyntaxError", "invalid syntax: %s", src)
	}
	return nil
}

func (p *pyParser) expr() (any, error) {
	v, err := p.postfix()
	if err != nil {
		return nil, err
	}
	for p.accept(">>") {
		r, err := p.postfix()
		if err != nil {
			return nil, err
		}
		a, ok1 := v.(int64)
		b, ok2 := r.(int64)
		if !ok1 || !ok2 || b < 0 {
			return nil, pyErr("TypeError", "unsupported operand type(s) for >>")
		}
		v = a >> b
	}
	return v, nil
}

func (p *pyParser) atom() (any, error) {
	t := p.next()
	switch t.kind {
	case 'i':
		return t.num, nil
	case 's':
		return t.text, nil
	case 'b':
		return pyBytes(t.text), nil
	case 'n':
		switch t.text {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		case "bfrt":
			return &bfNode{}, nil
		case "print":
			return builtinPrint{}, nil
		}
		v, ok := p.in.vars[t.text]
		if !ok {
			return nil, pyErr("NameError", "name '%s' is not defined", t.text)
		}
		return v, nil
	case 'p':
		switch t.text {
		case "-":
			v, err := p.atom()
			if n, ok := v.(int64); ok && err == nil {
				return -n, nil
			}
			return nil, pyErr("TypeError", "bad operand type for unary -")
		case "(":
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			return v, p.expect(")")
		case "[":
			var list []any
			for !p.accept("]") {
				if p.peek().kind == 0 {
					return nil, pyErr("SyntaxError", "unexpected EOF while parsing")
				}
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				list = append(list, v)
				if !p.accept(",") {
					if err := p.expect("]"); err != nil {
						return nil, err
					}
					break
				}
			}
			if list == nil {
				list = []any{}
			}
			return list, nil
		}
	}
	return nil, pyErr("SyntaxError", "invalid syntax at %q", t.text)
}

type builtinPrint struct{}

func (p *pyParser) postfix() (any, error) {
	v, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("."):
			name := p.next()
			if name.kind != 'n' {
				return nil, pyErr("SyntaxError", "invalid syntax after '.'")
			}
			if v, err = p.in.attr(v, name.text); err != nil {
				return nil, err
			}
		case p.accept("["):
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if v, err = subscript(v, idx); err != nil {
				return nil, err
			}
		case p.accept("("):
			var args []any
			kwargs := map[string]any{}
			var order []string
			for !p.accept(")") {
				if p.peek().kind == 0 {
					return nil, pyErr("SyntaxError", "unexpected EOF while parsing")
				}
				if t, u := p.peek(), p.at(1); t.kind == 'n' && u.kind == 'p' && u.text == "=" {
					p.pos += 2
					a, err := p.expr()
					if err != nil {
						return nil, err
					}
					if _, dup := kwargs[t.text]; dup {
						return nil, pyErr("SyntaxError", "keyword argument repeated: %s", t.text)
					}
					kwargs[t.text] = a
					order = append(order, t.text)
				} else {
					if len(kwargs) > 0 {
						return nil, pyErr("SyntaxError", "positional argument follows keyword argument")
					}
					a, err := p.expr()
					if err != nil {
						return nil, err
					}
					args = append(args, a)
				}
				if !p.accept(",") {
					if err := p.expect(")"); err != nil {
						return nil, err
					}
					break
				}
			}
			if v, err = p.in.call(v, args, kwargs, order); err != nil {
				return nil, err
			}
		default:
			return v, nil
		}
	}
}

func subscript(v, idx any) (any, error) {
	switch x := v.(type) {
	case bfDict:
		k, ok := idx.(pyBytes)
		if !ok {
			return nil, pyErr("KeyError", "%s", pyRepr(idx))
		}
		r, ok := x[string(k)]
		if !ok {
			return nil, pyErr("KeyError", "%s", pyStr(idx))
		}
		return r, nil
	case []any:
		i, ok := idx.(int64)
		if !ok {
			return nil, pyErr("TypeError", "list indices must be integers")
		}
		if i < 0 {
			i += int64(len(x))
		}
		if i < 0 || i >= int64(len(x)) {
			return nil, pyErr("IndexError", "list index out of range")
		}
		return x[i], nil
	}
	return nil, pyErr("TypeError", "object is not subscriptable")
}

func (in *pyInterp) attr(v any, name string) (any, error) {
	switch x := v.(type) {
	case *bfNode:
		return in.sw.node(x.path, name)
	case *bfEntry:
		if name == "data" {
			return x.data, nil
		}
	}
	return nil, pyErr("AttributeError", "object has no attribute '%s'", name)
}

func (in *pyInterp) call(fn any, args []any, kwargs map[string]any, order []string) (any, error) {
	switch f := fn.(type) {
	case builtinPrint:
		if len(kwargs) > 0 {
			return nil, pyErr("TypeError", "print() keyword arguments are not used by labctl's scripts")
		}
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = pyStr(a)
		}
		in.print(strings.Join(s, " "))
		return nil, nil
	case *bfMethod:
		return in.sw.callTable(f.table, f.name, args, kwargs, order)
	}
	return nil, pyErr("TypeError", "object is not callable")
}
