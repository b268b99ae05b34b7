package openconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// listKeys names the key leaf of each openconfig-qos list labctl reads
// (and of the Enterprise SONiC PFC augment), as a JSON_IETF answer
// carries lists: arrays of entries holding their key leaves.
func listKeys() map[string]string {
	return map[string]string{
		"queue": "name", "interface": "interface-id", "classifier": "name", "term": "id",
		"forwarding-group": "name", "scheduler-policy": "name", "scheduler": "sequence", "input": "id",
		"queue-management-profile": "name", "buffer-allocation-profile": "name", "pfc-priority": "dot1p",
	}
}

// maxJSONBytes bounds a JSON_IETF value Read accepts.
const maxJSONBytes = 64 << 20

// FlattenJSON adds to l the leaves of a JSON_IETF value at path (what a
// target answers for a Get of a subtree, e.g. /qos): containers become
// path elements, lists become keyed elements (by listKeys; a list of
// another key is refused), module prefixes ("openconfig-qos:") are
// dropped, and values become their text (RFC 7951 writes 64-bit numbers
// as strings).
func FlattenJSON(l Leaves, path string, data []byte) error {
	if len(data) > maxJSONBytes {
		return fmt.Errorf("%s: %d bytes of JSON is more than %d", path, len(data), maxJSONBytes)
	}
	var v any
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return flatten(l, path, "", v, 0)
}

func flatten(l Leaves, path, name string, v any, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s: nested deeper than 32", path)
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n := k[strings.IndexByte(k, ':')+1:]
			if err := flatten(l, path+"/"+n, n, x[k], depth+1); err != nil {
				return err
			}
		}
	case []any:
		key, ok := listKeys()[name]
		if strings.HasSuffix(path, "/input/classifiers/classifier") {
			key = "type" // an interface's classifiers, one per traffic type
		}
		if !ok {
			return fmt.Errorf("%s: a list labctl does not read", path)
		}
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: a list entry is not an object", path)
			}
			kv, err := scalar(m[key])
			if err != nil || kv == "" || strings.ContainsAny(kv, "[]") {
				return fmt.Errorf("%s: an entry without a usable key %q", path, key)
			}
			if err := flatten(l, fmt.Sprintf("%s[%s=%s]", path, key, kv), "", m, depth+1); err != nil {
				return err
			}
		}
	default:
		s, err := scalar(x)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		l[path] = s
	}
	return nil
}

func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("value %v is not a leaf", v)
}

// JSONIETF is the leaves of l under path as the JSON_IETF value of a Get
// of path (FlattenJSON's inverse): keyed elements become list entries
// holding their keys, the first element below path carries the
// openconfig-qos module prefix, booleans are JSON booleans and the other
// values strings.
func JSONIETF(l Leaves, path string) ([]byte, error) {
	root := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(l)) {
		rest, ok := strings.CutPrefix(k, path)
		if !ok || (rest != "" && rest[0] != '/') || rest == "" {
			continue
		}
		p, err := ParsePath(rest)
		if err != nil {
			return nil, err
		}
		node := root
		for i, e := range p.GetElem() {
			name := e.GetName()
			if i == 0 {
				name = "openconfig-qos:" + name
			}
			last := i == len(p.GetElem())-1
			if len(e.GetKey()) == 0 {
				if last {
					node[name] = leafJSON(l[k])
					break
				}
				next, _ := node[name].(map[string]any)
				if next == nil {
					next = map[string]any{}
					node[name] = next
				}
				node = next
				continue
			}
			list, _ := node[name].([]any)
			var entry map[string]any
			for _, x := range list {
				m := x.(map[string]any)
				match := true
				for kk, kv := range e.GetKey() {
					match = match && m[kk] == kv
				}
				if match {
					entry = m
				}
			}
			if entry == nil {
				entry = map[string]any{}
				for kk, kv := range e.GetKey() {
					entry[kk] = kv
				}
				node[name] = append(list, entry)
			}
			node = entry
		}
	}
	return json.Marshal(root)
}

func leafJSON(v string) any {
	if v == "true" || v == "false" {
		return v == "true"
	}
	return v
}
