package openconfig

import (
	"fmt"
	"sort"
	"strings"

	pb "github.com/openconfig/gnmi/proto/gnmi"
)

// ParsePath reads a path as labctl writes them: /elem[key=value]/elem,
// no "/", "[", "]" or "=" in key values (port names may hold "/": they
// are written as given and ParsePath splits only outside brackets).
func ParsePath(s string) (*pb.Path, error) {
	if !strings.HasPrefix(s, "/") || len(s) > 4096 {
		return nil, fmt.Errorf("path %q: want /elem[key=value]/...", s)
	}
	p := &pb.Path{}
	var cur *pb.PathElem
	i := 1
	for i <= len(s) {
		j := i
		for j < len(s) && s[j] != '/' && s[j] != '[' {
			j++
		}
		if j == i {
			return nil, fmt.Errorf("path %q: empty element at %d", s, i)
		}
		cur = &pb.PathElem{Name: s[i:j]}
		for j < len(s) && s[j] == '[' {
			end := strings.IndexByte(s[j:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", s)
			}
			k, v, ok := strings.Cut(s[j+1:j+end], "=")
			if !ok || k == "" || strings.ContainsAny(k, "[/") || strings.Contains(v, "[") {
				return nil, fmt.Errorf("path %q: bad key %q", s, s[j+1:j+end])
			}
			if cur.Key == nil {
				cur.Key = map[string]string{}
			}
			cur.Key[k] = v
			j += end + 1
		}
		p.Elem = append(p.Elem, cur)
		if j < len(s) && s[j] != '/' {
			return nil, fmt.Errorf("path %q: text after a key at %d", s, j)
		}
		i = j + 1
	}
	return p, nil
}

// FormatPath is prefix+path as /elem[key=value]/elem, keys sorted: the
// form ParsePath reads and the keys of Leaves.
func FormatPath(prefix, path *pb.Path) string {
	var b strings.Builder
	for _, e := range append(append([]*pb.PathElem(nil), prefix.GetElem()...), path.GetElem()...) {
		b.WriteByte('/')
		b.WriteString(e.GetName())
		keys := make([]string, 0, len(e.GetKey()))
		for k := range e.GetKey() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "[%s=%s]", k, e.GetKey()[k])
		}
	}
	return b.String()
}
