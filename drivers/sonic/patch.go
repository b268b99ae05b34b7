package sonic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Op is one operation of an RFC 6902 JSON patch on CONFIG_DB, the input
// of `config apply-patch`: paths are JSON pointers /TABLE/KEY/FIELD
// (RFC 6901: "~" and "/" in a key escaped as ~0 and ~1).
type Op struct {
	Op    string `json:"op"` // add | remove | replace
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Patch is the JSON patch that turns have into want (both DBs of the QoS
// tables), in a stable order: whole tables or entries that are new are
// added whole, changed fields are added (which replaces a member), gone
// fields, entries and tables are removed. A table want empties is
// removed as a whole: CONFIG_DB has no empty tables.
func Patch(have, want DB) []Op {
	var ops []Op
	for _, t := range unionKeys(have, want) {
		h, w := have[t], want[t]
		switch {
		case len(w) == 0 && len(h) > 0:
			ops = append(ops, Op{Op: "remove", Path: pointer(t)})
			continue
		case len(h) == 0 && len(w) > 0:
			ops = append(ops, Op{Op: "add", Path: pointer(t), Value: w})
			continue
		}
		for _, k := range unionKeys(h, w) {
			he, we := h[k], w[k]
			switch {
			case we == nil:
				ops = append(ops, Op{Op: "remove", Path: pointer(t, k)})
				continue
			case he == nil:
				ops = append(ops, Op{Op: "add", Path: pointer(t, k), Value: we})
				continue
			}
			for _, f := range unionKeys(he, we) {
				hv, inH := he[f]
				wv, inW := we[f]
				switch {
				case !inW:
					ops = append(ops, Op{Op: "remove", Path: pointer(t, k, f)})
				case !inH || hv != wv:
					ops = append(ops, Op{Op: "add", Path: pointer(t, k, f), Value: wv})
				}
			}
		}
	}
	return ops
}

func unionKeys[V any](a, b map[string]V) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return slices.Sorted(maps.Keys(m))
}

// pointer is the JSON pointer of a table, key or field.
func pointer(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// splitPointer is pointer's inverse.
func splitPointer(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q: a JSON pointer starts with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(s, "~0", ""), "~1", ""), "~") {
			return nil, fmt.Errorf("path %q: bad escape in %q", p, s)
		}
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
	}
	return parts, nil
}

// ParsePatch reads a JSON patch file.
func ParsePatch(data []byte) ([]Op, error) {
	if len(data) > maxTableBytes {
		return nil, fmt.Errorf("patch: %d bytes is more than %d", len(data), maxTableBytes)
	}
	var ops []Op
	if err := json.Unmarshal(data, &ops); err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	return ops, nil
}

// Apply is db after ops, applied in order to a copy (db is unchanged);
// the first operation that cannot apply (RFC 6902: its parent does not
// exist, or removing what is not there) fails the whole patch. Only the
// QoS tables are patched: a path into another table is refused.
func Apply(db DB, ops []Op) (DB, error) {
	out := db.Clone()
	for i, op := range ops {
		if err := out.apply(op); err != nil {
			return nil, fmt.Errorf("operation %d (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return out, nil
}

func (db DB) apply(op Op) error {
	parts, err := splitPointer(op.Path)
	if err != nil {
		return err
	}
	if len(parts) == 0 || len(parts) > 3 || !isQoSTable(parts[0]) {
		return fmt.Errorf("labctl's patches touch fields of the QoS tables only")
	}
	table := parts[0]
	switch op.Op {
	case "remove":
		switch len(parts) {
		case 1:
			if _, ok := db[table]; !ok {
				return fmt.Errorf("no table %s", table)
			}
			delete(db, table)
		case 2:
			if _, ok := db[table][parts[1]]; !ok {
				return fmt.Errorf("no entry %s|%s", table, parts[1])
			}
			delete(db[table], parts[1])
		case 3:
			if _, ok := db[table][parts[1]][parts[2]]; !ok {
				return fmt.Errorf("no field %s of %s|%s", parts[2], table, parts[1])
			}
			delete(db[table][parts[1]], parts[2])
		}
		return nil
	case "add", "replace":
	default:
		return fmt.Errorf("operation %q: labctl's patches use add, replace and remove", op.Op)
	}
	raw, err := json.Marshal(op.Value)
	if err != nil {
		return err
	}
	exists := false
	switch len(parts) {
	case 1:
		var v map[string]map[string]string
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("value of a table: %w", err)
		}
		_, exists = db[table]
		db[table] = v
	case 2:
		var v map[string]string
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("value of an entry: %w", err)
		}
		if db[table] == nil {
			return fmt.Errorf("no table %s", table)
		}
		_, exists = db[table][parts[1]]
		db[table][parts[1]] = v
	case 3:
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("value of a field: %w", err)
		}
		if db[table][parts[1]] == nil {
			return fmt.Errorf("no entry %s|%s", table, parts[1])
		}
		_, exists = db[table][parts[1]][parts[2]]
		db[table][parts[1]][parts[2]] = v
	}
	if op.Op == "replace" && !exists {
		return fmt.Errorf("replace of a member that does not exist")
	}
	return nil
}

// checkWord refuses a name that has no place in a CONFIG_DB key or on a
// shell command line (ports come from the lab file, which is held to a
// strict set already; this is the second line).
func checkWord(kind, s string) error {
	if s == "" || len(s) > 64 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._:-") != "" || strings.Contains(s, "..") {
		return fmt.Errorf("sonic: unsafe %s name %q", kind, s)
	}
	return nil
}
