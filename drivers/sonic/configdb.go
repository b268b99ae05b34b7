package sonic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// DB is the part of CONFIG_DB labctl's QoS lives in: table -> key ->
// field -> value, keys as sonic-cfggen prints them ("Ethernet0|3"), every
// value a string as CONFIG_DB holds it.
type DB map[string]map[string]map[string]string

// The CONFIG_DB tables of the QoS model.
const (
	TablePortQoSMap     = "PORT_QOS_MAP"
	TableDSCPToTC       = "DSCP_TO_TC_MAP"
	TableTCToQueue      = "TC_TO_QUEUE_MAP"
	TableTCToPG         = "TC_TO_PRIORITY_GROUP_MAP"
	TablePFCToQueue     = "MAP_PFC_PRIORITY_TO_QUEUE"
	TableBufferPool     = "BUFFER_POOL"
	TableBufferProfile  = "BUFFER_PROFILE"
	TableBufferPG       = "BUFFER_PG"
	TableWREDProfile    = "WRED_PROFILE"
	TableScheduler      = "SCHEDULER"
	TableQueue          = "QUEUE"
	TablePFCWatchdog    = "PFC_WD"
	maxTableBytes       = 64 << 20 // a CONFIG_DB dump larger than this is refused
	keySeparator        = "|"
	legacyRefPrefix     = "["
	legacyRefSeparator  = "|"
	legacyRefSuffix     = "]"
	maxEntriesPerParsed = 1 << 20
)

// Tables lists the tables DB holds, in patch order.
func Tables() []string {
	return []string{TableBufferPool, TableBufferProfile, TableBufferPG, TableDSCPToTC, TableTCToQueue, TableTCToPG,
		TablePFCToQueue, TableWREDProfile, TableScheduler, TableQueue, TablePortQoSMap, TablePFCWatchdog}
}

func isQoSTable(t string) bool { return slices.Contains(Tables(), t) }

// ParseDB reads the QoS tables out of a CONFIG_DB dump as `sonic-cfggen
// -d --print-data` (or `--var-json TABLE` wrapped as {"TABLE": ...}) and
// config_db.json print it; other tables are skipped. A field that is not
// a string (some tables hold lists) is kept as its JSON text.
func ParseDB(data []byte) (DB, error) {
	if len(data) > maxTableBytes {
		return nil, fmt.Errorf("CONFIG_DB dump: %d bytes is more than %d", len(data), maxTableBytes)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("CONFIG_DB dump: %w", err)
	}
	db := DB{}
	n := 0
	for table, raw := range top {
		if !isQoSTable(table) {
			continue
		}
		var keys map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, fmt.Errorf("CONFIG_DB dump: table %s: %w", table, err)
		}
		t := map[string]map[string]string{}
		for key, fields := range keys {
			e := map[string]string{}
			for f, v := range fields {
				var s string
				if json.Unmarshal(v, &s) != nil {
					s = string(v)
				}
				e[f] = s
			}
			if n++; n > maxEntriesPerParsed {
				return nil, fmt.Errorf("CONFIG_DB dump: more than %d entries", maxEntriesPerParsed)
			}
			t[key] = e
		}
		db[table] = t
	}
	return db, nil
}

// Clone is a deep copy of db.
func (db DB) Clone() DB {
	out := make(DB, len(db))
	for t, keys := range db {
		ck := make(map[string]map[string]string, len(keys))
		for k, f := range keys {
			ck[k] = maps.Clone(f)
		}
		out[t] = ck
	}
	return out
}

// entry is db[table][key], nil if absent.
func (db DB) entry(table, key string) map[string]string {
	return db[table][key]
}

// set makes db[table][key][field] = value, creating what is missing.
func (db DB) set(table, key, field, value string) {
	if db[table] == nil {
		db[table] = map[string]map[string]string{}
	}
	if db[table][key] == nil {
		db[table][key] = map[string]string{}
	}
	db[table][key][field] = value
}

// put replaces db[table][key] with fields.
func (db DB) put(table, key string, fields map[string]string) {
	if db[table] == nil {
		db[table] = map[string]map[string]string{}
	}
	db[table][key] = fields
}

// del removes db[table][key], and the table if that empties it (CONFIG_DB
// has no empty tables).
func (db DB) del(table, key string) {
	delete(db[table], key)
	if len(db[table]) == 0 {
		delete(db, table)
	}
}

// ref is the object name a reference field holds: a bare name, or the
// "[TABLE|name]" form of older releases.
func ref(v string) string {
	if strings.HasPrefix(v, legacyRefPrefix) && strings.HasSuffix(v, legacyRefSuffix) {
		v = strings.TrimSuffix(strings.TrimPrefix(v, legacyRefPrefix), legacyRefSuffix)
		if _, name, ok := strings.Cut(v, legacyRefSeparator); ok {
			return name
		}
	}
	return v
}

// key joins the parts of a CONFIG_DB key.
func key(parts ...string) string { return strings.Join(parts, keySeparator) }

// intField parses a numeric field; "" is absent.
func intField(e map[string]string, f string) (int64, bool, error) {
	v, ok := e[f]
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q is not an integer", f, v)
	}
	return n, true, nil
}
