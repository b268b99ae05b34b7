package netconfd

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

const ncNS = "urn:ietf:params:xml:ns:netconf:base:1.0"

// node is a generic XML element: configuration data is kept as a tree and
// edited with NETCONF's operations, whatever the data model.
type node struct {
	Name  xml.Name
	Attrs []xml.Attr
	Text  string
	Kids  []*node
}

func parse(b []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{Name: t.Name, Attrs: t.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Kids = append(p.Kids, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += strings.TrimSpace(string(t))
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no XML element")
	}
	return root, nil
}

func (n *node) attr(local string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func (n *node) child(local string) *node {
	for _, k := range n.Kids {
		if k.Name.Local == local {
			return k
		}
	}
	return nil
}

// write serialises n, declaring a namespace where it changes.
func (n *node) write(b *bytes.Buffer, parentNS string) {
	b.WriteString("<" + n.Name.Local)
	if n.Name.Space != "" && n.Name.Space != parentNS {
		fmt.Fprintf(b, ` xmlns="%s"`, escape(n.Name.Space))
	}
	for _, a := range n.Attrs {
		if a.Name.Local == "xmlns" || a.Name.Space == "xmlns" || a.Name.Local == "operation" {
			continue
		}
		fmt.Fprintf(b, ` %s="%s"`, a.Name.Local, escape(a.Value))
	}
	if len(n.Kids) == 0 && n.Text == "" {
		b.WriteString("/>")
		return
	}
	b.WriteString(">" + escape(n.Text))
	for _, k := range n.Kids {
		k.write(b, n.Name.Space)
	}
	b.WriteString("</" + n.Name.Local + ">")
}

func escape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (n *node) clone() *node {
	c := &node{Name: n.Name, Attrs: append([]xml.Attr(nil), n.Attrs...), Text: n.Text}
	for _, k := range n.Kids {
		c.Kids = append(c.Kids, k.clone())
	}
	return c
}

// equal reports whether two trees hold the same data.
func (n *node) equal(o *node) bool {
	var a, b bytes.Buffer
	n.write(&a, "")
	o.write(&b, "")
	return a.String() == b.String()
}

// key is what identifies a list entry among its siblings: its name,
// interface-id or id leaf.
func (n *node) key() string {
	for _, k := range []string{"name", "interface-id", "id"} {
		if c := n.child(k); c != nil && len(c.Kids) == 0 {
			return c.Text
		}
	}
	return ""
}

func (n *node) find(e *node) int {
	for i, k := range n.Kids {
		if k.Name.Local == e.Name.Local && k.key() == e.key() {
			return i
		}
	}
	return -1
}

// rpcError is an <rpc-error> (RFC 6241, appendix A).
type rpcError struct {
	Type, Tag, Path, Msg string
}

func (e *rpcError) Error() string { return e.Tag + ": " + e.Msg }

// edit applies the children of cfg to target with NETCONF's operations
// (operation attributes, inheriting defOp).
func edit(target, cfg *node, defOp string) error {
	for _, e := range cfg.Kids {
		op := defOp
		if a := e.attr("operation"); a != "" {
			op = a
		}
		i := target.find(e)
		switch op {
		case "merge":
			switch {
			case i < 0:
				target.Kids = append(target.Kids, e.clone())
			case len(e.Kids) == 0:
				target.Kids[i].Text = e.Text
			default:
				if err := edit(target.Kids[i], e, "merge"); err != nil {
					return err
				}
			}
		case "replace":
			if i < 0 {
				target.Kids = append(target.Kids, e.clone())
			} else {
				target.Kids[i] = e.clone()
			}
		case "create":
			if i >= 0 {
				return &rpcError{"application", "data-exists", e.Name.Local, fmt.Sprintf("%s %q already exists", e.Name.Local, e.key())}
			}
			target.Kids = append(target.Kids, e.clone())
		case "delete", "remove":
			if i < 0 {
				if op == "remove" {
					continue
				}
				return &rpcError{"application", "data-missing", e.Name.Local, fmt.Sprintf("%s %q does not exist", e.Name.Local, e.key())}
			}
			target.Kids = append(target.Kids[:i], target.Kids[i+1:]...)
		case "none":
			if i < 0 {
				c := &node{Name: e.Name, Attrs: e.Attrs}
				target.Kids = append(target.Kids, c)
				i = len(target.Kids) - 1
			}
			if err := edit(target.Kids[i], e, "none"); err != nil {
				return err
			}
		default:
			return &rpcError{"protocol", "bad-attribute", e.Name.Local, fmt.Sprintf("unknown operation %q", op)}
		}
	}
	return nil
}

func xmlName(local string) xml.Name { return xml.Name{Local: local} }
