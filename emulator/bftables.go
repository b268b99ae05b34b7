package emulator

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/tofino"
)

// The tables an emulated Tofino serves to bfrt_python: the TM tables the
// SDE-shell driver uses, with the fields, types and choices of the SDE's
// bf_rt_tm_tf1.json (hardware-surfaces reference, 3.4), the port tables
// it needs to find ports, and the ECN and DSCP tables of the program the
// switch's bf_switchd loaded (tofino.ECNTable, tofino.DSCPTable). Writes are checked as
// the driver would be by the SDE: unknown fields, wrong types, values out
// of range or not among the choices, read-only fields, missing or
// duplicate entries.

type bfField struct {
	name     string
	kind     byte // 'u' unsigned int (max), 'b' bool, 's' string (choices), 'l' list of unsigned (max, n)
	max      int64
	choices  []string
	n        int
	readOnly bool
}

type bfTable struct {
	name    string
	keys    []bfField
	fields  []bfField            // data of get/mod
	actions map[string][]bfField // add_with_/mod_with_<action>: action data, besides fields
	fixed   bool                 // every valid key exists (get and mod only)
	pipe    bool                 // the pipe target is part of the key
	rows    map[string]bfDict
	// valid says whether a key names an existing object of a fixed table;
	// defaults is such an entry's data before any write.
	valid    func(key bfDict) error
	defaults func(key bfDict) bfDict
	// check sees a whole entry after a write, with the switch, before it is
	// kept (cross-field and cross-table rules).
	check func(key, data bfDict) error
	// live fills read-only fields that follow the device's state (a
	// port's $PORT_UP) into the data a get returns.
	live func(key, data bfDict)
}

func bfU(name string, bits uint) bfField { return bfField{name: name, kind: 'u', max: 1<<bits - 1} }
func bfB(name string) bfField            { return bfField{name: name, kind: 'b'} }
func bfS(name string, choices ...string) bfField {
	return bfField{name: name, kind: 's', choices: choices}
}
func bfRO(f bfField) bfField { f.readOnly = true; return f }

var tmPoolChoices = []string{"IG_APP_POOL_0", "IG_APP_POOL_1", "IG_APP_POOL_2", "IG_APP_POOL_3", "EG_APP_POOL_0", "EG_APP_POOL_1",
	"EG_APP_POOL_2", "EG_APP_POOL_3", "IG_SKID_POOL", "IG_EG_NEGATIVE_MIRROR_POOL", "EG_PRE_FIFO", "IG_EG_GUARANTEED_MIN",
	"EG_UNICAST_CUT_THROUGH", "EG_MULTICAST_CUT_THROUGH"}

var bafChoices = []string{"1.5%", "3%", "6%", "11%", "20%", "33%", "50%", "66%", "80%", "DISABLE"}

var schedPrios = []string{"LOW", "0", "1", "2", "3", "4", "5", "6", "7", "HIGH"}

// bfPort is an emulated port's place in the chip.
type bfPort struct {
	name          string
	conn, chnl    int
	devPort, pgID int
}

const (
	bfCellBytes = 80 // Tofino 1
	bfPipes     = 4
)

// bfSwitch is one emulated Tofino's bfrt state.
type bfSwitch struct {
	program    string // the P4 program loaded ("" none: no program tables)
	tables     map[string]*bfTable
	ports      []bfPort
	totalCells int64
	writes     int         // successful writes since the twin last heard
	portsUp    func() bool // the device's ports are up (bf_switchd runs)
}

// newBfSwitch lays the switch's ports out in order, 64 to a pipe:
// dev_port (pipe << 7) | n, in port group n/4 at pg_port_nr n%4, its queues
// 0..7 at pg_queue 8*pg_port_nr .. +7. A real Tofino's layout follows its
// lanes (16 100G ports a pipe on a 64-port chip); the emulator packs ports
// densely so that generated labs with many ports per switch still fit.
func newBfSwitch(ports []string, program string, bufferBytes int64, portsUp func() bool) (*bfSwitch, error) {
	sw := &bfSwitch{program: program, tables: map[string]*bfTable{}, totalCells: bufferBytes / bfCellBytes, portsUp: portsUp}
	for k, name := range ports {
		conn, chnl, err := tofino.ParsePortName(name)
		if err != nil {
			return nil, err
		}
		pipe, n := k/64, k%64
		if pipe >= bfPipes {
			return nil, fmt.Errorf("port %s: an emulated Tofino has %d ports", name, 64*bfPipes)
		}
		sw.ports = append(sw.ports, bfPort{name: name, conn: conn, chnl: chnl, devPort: pipe<<7 | n, pgID: n / 4})
	}
	sw.addTMTables()
	if program == "" {
		return sw, nil
	}
	sw.add(&bfTable{name: tofino.ECNTable(program), keys: []bfField{bfU("qid", 5)},
		actions: map[string][]bfField{"set_red": {bfU("kmin_cells", 19), bfU("kmax_cells", 19), bfU("pmax_percent", 7)}}})
	sw.add(&bfTable{name: tofino.DSCPTable(program), keys: []bfField{bfU("dscp", 6)},
		actions: map[string][]bfField{"set_tc": {bfU("tc", 3)}}})
	return sw, nil
}

// bfRows is every entry a switch's tables hold, by table and key.
type bfRows map[string]map[string]bfDict

// rows copies the entries out of sw's tables.
func (sw *bfSwitch) rows() bfRows {
	out := bfRows{}
	for name, t := range sw.tables {
		out[name] = map[string]bfDict{}
		for k, row := range t.rows {
			out[name][k] = copyDict(row)
		}
	}
	return out
}

// setRows replaces the entries of sw's tables with copies of r's.
func (sw *bfSwitch) setRows(r bfRows) {
	for name, t := range sw.tables {
		t.rows = map[string]bfDict{}
		for k, row := range r[name] {
			t.rows[k] = copyDict(row)
		}
	}
}

func (sw *bfSwitch) add(t *bfTable) {
	t.rows = map[string]bfDict{}
	sw.tables[t.name] = t
}

func (sw *bfSwitch) portByDev(dev int64) (bfPort, bool) {
	for _, p := range sw.ports {
		if int64(p.devPort) == dev {
			return p, true
		}
	}
	return bfPort{}, false
}

func notFound(key bfDict) error {
	return fmt.Errorf("Object not found: %s", keyString(key))
}

func (sw *bfSwitch) devPortKey(field string) func(bfDict) error {
	return func(k bfDict) error {
		if _, ok := sw.portByDev(k[field].(int64)); !ok {
			return notFound(k)
		}
		return nil
	}
}

func (sw *bfSwitch) addTMTables() {
	sw.add(&bfTable{name: "tf1.tm.cfg", fixed: true, fields: []bfField{bfRO(bfU("cell_size_bytes", 32)), bfRO(bfU("total_cells", 32))},
		defaults: func(bfDict) bfDict {
			return bfDict{"cell_size_bytes": int64(bfCellBytes), "total_cells": sw.totalCells}
		}})
	sw.add(&bfTable{name: "port.port_hdl_info", fixed: true, keys: []bfField{bfU("CONN_ID", 32), bfU("CHNL_ID", 32)},
		fields: []bfField{bfRO(bfU("$DEV_PORT", 32))},
		valid: func(k bfDict) error {
			for _, p := range sw.ports {
				if int64(p.conn) == k["CONN_ID"] && int64(p.chnl) == k["CHNL_ID"] {
					return nil
				}
			}
			return notFound(k)
		},
		defaults: func(k bfDict) bfDict {
			for _, p := range sw.ports {
				if int64(p.conn) == k["CONN_ID"] && int64(p.chnl) == k["CHNL_ID"] {
					return bfDict{"$DEV_PORT": int64(p.devPort)}
				}
			}
			return nil
		}})
	sw.add(&bfTable{name: "port.port", fixed: true, keys: []bfField{bfU("$DEV_PORT", 32)},
		fields: []bfField{bfU("$TX_PFC_EN_MAP", 32), bfU("$RX_PFC_EN_MAP", 32), bfB("$PORT_ENABLE"), bfRO(bfS("$PORT_NAME")), bfRO(bfB("$PORT_UP"))},
		valid:  sw.devPortKey("$DEV_PORT"),
		live: func(_, data bfDict) {
			data["$PORT_UP"] = sw.portsUp != nil && sw.portsUp() && data["$PORT_ENABLE"] == true
		},
		defaults: func(k bfDict) bfDict {
			p, _ := sw.portByDev(k["$DEV_PORT"].(int64))
			return bfDict{"$TX_PFC_EN_MAP": int64(0), "$RX_PFC_EN_MAP": int64(0), "$PORT_ENABLE": true, "$PORT_NAME": p.name}
		}})
	sw.add(&bfTable{name: "tf1.tm.port.cfg", fixed: true, keys: []bfField{bfU("dev_port", 32)},
		fields: []bfField{bfRO(bfU("pg_id", 8)), bfRO(bfU("pg_port_nr", 8)), bfRO(bfField{name: "egress_qid_queues", kind: 'l', max: 31, n: 8}),
			bfRO(bfField{name: "ingress_qid_map", kind: 'l', max: 31, n: 32})},
		valid: sw.devPortKey("dev_port"),
		defaults: func(k bfDict) bfDict {
			p, _ := sw.portByDev(k["dev_port"].(int64))
			nr := (p.devPort & 127) % 4
			eg, ig := make([]any, 8), make([]any, 32)
			for q := range eg {
				eg[q] = int64(nr*8 + q)
			}
			for q := range ig {
				ig[q] = int64(q % 8)
			}
			return bfDict{"pg_id": int64(p.pgID), "pg_port_nr": int64(nr), "egress_qid_queues": eg, "ingress_qid_map": ig}
		}})
	sw.add(&bfTable{name: "tf1.tm.port.flowcontrol", fixed: true, keys: []bfField{bfU("dev_port", 32)},
		// mode_rx is read-only in the SDE's tf1 JSON although public scripts
		// write it (UNCERTAIN, reference 3.4); the emulator accepts it.
		fields: []bfField{bfS("mode_tx", "NONE", "PFC", "PAUSE"), bfS("mode_rx", "NONE", "PFC", "PAUSE"), {name: "cos_to_icos", kind: 'l', max: 7, n: 8}},
		valid:  sw.devPortKey("dev_port"),
		defaults: func(bfDict) bfDict {
			return bfDict{"mode_tx": "NONE", "mode_rx": "NONE", "cos_to_icos": []any{int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7)}}
		}})
	ppgData := []bfField{}
	for i := 0; i < 8; i++ {
		ppgData = append(ppgData, bfB(fmt.Sprintf("icos_%d", i)))
	}
	ppgData = append(ppgData, bfU("guaranteed_cells", 32), bfU("hysteresis_cells", 32), bfS("pool_id", "IG_APP_POOL_0", "IG_APP_POOL_1", "IG_APP_POOL_2", "IG_APP_POOL_3"),
		bfU("pool_max_cells", 32), bfS("dynamic_baf", bafChoices...), bfRO(bfU("ppg_counter_id", 8)))
	sw.add(&bfTable{name: "tf1.tm.ppg.cfg", pipe: true, keys: []bfField{bfU("ppg_id", 8)}, fields: ppgData,
		actions: map[string][]bfField{"dev_port": {bfU("dev_port", 32), bfB("pfc_enable"), bfU("pfc_skid_max_cells", 32)}},
		check:   sw.checkPPG})
	sw.add(&bfTable{name: "tf1.tm.pool.cfg", fixed: true, keys: []bfField{bfS("pool", tmPoolChoices...)}, fields: []bfField{bfU("size_cells", 32)},
		defaults: func(k bfDict) bfDict {
			// Out of the box the application pool 0 of each direction holds
			// the buffer less a reserve; the others are empty.
			if k["pool"] == "IG_APP_POOL_0" || k["pool"] == "EG_APP_POOL_0" {
				return bfDict{"size_cells": sw.totalCells * 3 / 4}
			}
			return bfDict{"size_cells": int64(0)}
		},
		check: sw.checkPools})
	queueKeys := []bfField{bfU("pg_id", 8), bfU("pg_queue", 8)}
	validQueue := func(k bfDict) error {
		if k["pg_id"].(int64) > 17 || k["pg_queue"].(int64) > 31 {
			return fmt.Errorf("Invalid arg: pg_id 0..17, pg_queue 0..31")
		}
		return nil
	}
	sw.add(&bfTable{name: "tf1.tm.queue.cfg", fixed: true, pipe: true, keys: queueKeys,
		fields: []bfField{bfRO(bfB("mirror_drop_destination")), bfU("pfc_cos", 3)}, valid: validQueue,
		defaults: func(bfDict) bfDict { return bfDict{"mirror_drop_destination": false, "pfc_cos": int64(0)} }})
	sw.add(&bfTable{name: "tf1.tm.queue.sched_cfg", fixed: true, pipe: true, keys: queueKeys,
		fields: []bfField{bfB("min_rate_enable"), bfS("min_priority", schedPrios...), bfB("max_rate_enable"), bfS("max_priority", schedPrios...),
			bfU("dwrr_weight", 16), bfB("scheduling_enable")},
		valid: validQueue,
		defaults: func(bfDict) bfDict {
			return bfDict{"min_rate_enable": false, "min_priority": "0", "max_rate_enable": false, "max_priority": "0",
				"dwrr_weight": int64(1023), "scheduling_enable": true}
		}})
}

// checkPPG: the PPG's port exists on the pipe of the key, a pipe holds at
// most 128 PPGs, and an iCoS of a port belongs to one PPG.
func (sw *bfSwitch) checkPPG(key, data bfDict) error {
	p, ok := sw.portByDev(data["dev_port"].(int64))
	if !ok {
		return fmt.Errorf("Invalid arg: dev_port %d is not a port", data["dev_port"])
	}
	if int64(p.devPort>>7) != key["pipe"] {
		return fmt.Errorf("Invalid arg: dev_port %d is not on pipe %d", p.devPort, key["pipe"])
	}
	t := sw.tables["tf1.tm.ppg.cfg"]
	n := 0
	for k, row := range t.rows {
		if k == keyString(key) {
			continue
		}
		if strings.HasPrefix(k, fmt.Sprintf("pipe=%d,", key["pipe"])) {
			n++
		}
		if row["dev_port"] != data["dev_port"] {
			continue
		}
		for i := 0; i < 8; i++ {
			f := fmt.Sprintf("icos_%d", i)
			if row[f] == true && data[f] == true {
				return fmt.Errorf("Invalid arg: icos %d of dev_port %d already belongs to another PPG (%s)", i, p.devPort, k)
			}
		}
	}
	if n >= 128 {
		return fmt.Errorf("No resource: pipe %d has 128 PPGs", key["pipe"])
	}
	return nil
}

// checkPools: the application pools of each direction fit the buffer.
func (sw *bfSwitch) checkPools(key, data bfDict) error {
	dir := strings.SplitN(key["pool"].(string), "_", 2)[0] // IG | EG
	var total int64
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("%s_APP_POOL_%d", dir, i)
		v := sw.get("tf1.tm.pool.cfg", bfDict{"pool": name})["size_cells"].(int64)
		if name == key["pool"] {
			v = data["size_cells"].(int64)
		}
		total += v
	}
	if total > sw.totalCells {
		return fmt.Errorf("Invalid arg: %s application pools would hold %d cells, the buffer has %d", dir, total, sw.totalCells)
	}
	return nil
}

// get is an entry's data (for checks and the twin); nil if absent.
func (sw *bfSwitch) get(table string, key bfDict) bfDict {
	t := sw.tables[table]
	if row, ok := t.rows[keyString(key)]; ok {
		return row
	}
	if t.fixed && t.defaults != nil {
		return t.defaults(key)
	}
	return nil
}

func keyString(k bfDict) string {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { // pipe first, then the key fields by name
		if (names[i] == "pipe") != (names[j] == "pipe") {
			return names[i] == "pipe"
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", n, pyStr(k[n]))
	}
	return b.String()
}

// node resolves bfrt.<path>.<name>: a deeper node, a table, or a method.
func (sw *bfSwitch) node(path, name string) (any, error) {
	if t, ok := sw.tables[path]; ok {
		return &bfMethod{table: t, name: name}, nil
	}
	full := name
	if path != "" {
		full = path + "." + name
	}
	if _, ok := sw.tables[full]; ok {
		return &bfNode{path: full}, nil
	}
	for n := range sw.tables {
		if strings.HasPrefix(n, full+".") {
			return &bfNode{path: full}, nil
		}
	}
	return nil, pyErr("AttributeError", "'BFNode' object has no attribute '%s' (bfrt.%s)", name, full)
}

func tableErr(op string, t *bfTable, err error) *pyError {
	return pyErr("BfRtTableError", "%s failed on table %s: %v", op, t.name, err)
}

// callTable runs one table method.
func (sw *bfSwitch) callTable(t *bfTable, method string, args []any, kwargs map[string]any, order []string) (any, error) {
	op, action := method, ""
	switch {
	case method == "get", method == "mod", method == "delete", method == "add":
	case strings.HasPrefix(method, "add_with_"), strings.HasPrefix(method, "mod_with_"):
		op, action = method[:3], method[len("add_with_"):]
		if _, ok := t.actions[action]; !ok {
			return nil, pyErr("AttributeError", "table %s has no action %s", t.name, action)
		}
	default:
		return nil, pyErr("AttributeError", "'%s' object has no attribute '%s' (not emulated)", t.name, method)
	}
	opName := map[string]string{"get": "table_entry_get", "mod": "table_entry_mod", "add": "table_entry_add", "delete": "table_entry_del"}[op]
	if t.actions != nil && (op == "mod" || op == "add") && action == "" {
		return nil, tableErr(opName, t, fmt.Errorf("Invalid arg: an action is required (%s_with_<action>)", op))
	}
	if t.fixed && (op == "add" || op == "delete") {
		return nil, tableErr(opName, t, fmt.Errorf("Not supported: entries of this table cannot be added or deleted"))
	}
	if v, ok := kwargs["print_ents"]; ok {
		if op != "get" {
			return nil, pyErr("TypeError", "%s() got an unexpected keyword argument 'print_ents'", method)
		}
		if v != false {
			return nil, pyErr("TypeError", "labctl's scripts always get with print_ents=False")
		}
		delete(kwargs, "print_ents")
		order = slices.DeleteFunc(order, func(s string) bool { return s == "print_ents" })
	}
	// Key fields: positional in key order, or by name ($ may be left out).
	key := bfDict{}
	if len(args) > len(t.keys) {
		return nil, pyErr("TypeError", "%s() takes at most %d positional arguments", method, len(t.keys))
	}
	for i, a := range args {
		key[t.keys[i].name] = a
	}
	take := func(f bfField) (any, bool) {
		for _, n := range []string{f.name, strings.TrimPrefix(f.name, "$")} {
			if v, ok := kwargs[n]; ok {
				delete(kwargs, n)
				return v, true
			}
		}
		return nil, false
	}
	for _, f := range t.keys {
		if v, ok := take(f); ok {
			key[f.name] = v
		}
		v, ok := key[f.name]
		if !ok {
			return nil, tableErr(opName, t, fmt.Errorf("Invalid arg: key field %s is missing", f.name))
		}
		if err := f.check(v); err != nil {
			return nil, tableErr(opName, t, err)
		}
	}
	if t.pipe {
		p, ok := kwargs["pipe"]
		delete(kwargs, "pipe")
		if n, isInt := p.(int64); !ok || !isInt || n < 0 || n >= bfPipes {
			return nil, tableErr(opName, t, fmt.Errorf("Invalid arg: a pipe (0..%d) is required", bfPipes-1))
		}
		key["pipe"] = p
	} else if _, ok := kwargs["pipe"]; ok && t.name == "tf1.tm.port.cfg" {
		delete(kwargs, "pipe") // accepted and ignored: the dev_port names the pipe
	}
	if t.valid != nil {
		if err := t.valid(key); err != nil {
			return nil, tableErr(opName, t, err)
		}
	}
	ks := keyString(key)
	row, exists := t.rows[ks]
	if !exists && t.fixed {
		row, exists = t.defaults(key), true
	}
	switch op {
	case "get":
		if len(kwargs) > 0 {
			return nil, pyErr("TypeError", "get() got an unexpected keyword argument '%s'", firstKey(kwargs, order))
		}
		if !exists {
			return nil, tableErr(opName, t, notFound(key))
		}
		data := copyDict(row)
		if t.live != nil {
			t.live(key, data)
		}
		return &bfEntry{data: data}, nil
	case "delete":
		if len(kwargs) > 0 {
			return nil, pyErr("TypeError", "delete() got an unexpected keyword argument '%s'", firstKey(kwargs, order))
		}
		if !exists {
			return nil, tableErr(opName, t, notFound(key))
		}
		delete(t.rows, ks)
		sw.writes++
		return nil, nil
	}
	if op == "add" && exists {
		return nil, tableErr(opName, t, fmt.Errorf("Already exists: %s", ks))
	}
	if op == "mod" && !exists {
		return nil, tableErr(opName, t, notFound(key))
	}
	fields := append(append([]bfField(nil), t.fields...), t.actions[action]...)
	data := bfDict{}
	if op == "mod" {
		data = copyDict(row)
	} else {
		for _, f := range fields {
			data[f.name] = f.zero()
		}
	}
	for _, f := range fields {
		v, ok := take(f)
		if !ok {
			continue
		}
		if f.readOnly {
			return nil, tableErr(opName, t, fmt.Errorf("Invalid arg: field %s is read-only", f.name))
		}
		if err := f.check(v); err != nil {
			return nil, tableErr(opName, t, err)
		}
		data[f.name] = v
	}
	if len(kwargs) > 0 {
		return nil, tableErr(opName, t, fmt.Errorf("Invalid arg: field %s is not in the table", firstKey(kwargs, order)))
	}
	if t.check != nil {
		if err := t.check(key, data); err != nil {
			return nil, tableErr(opName, t, err)
		}
	}
	t.rows[ks] = data
	sw.writes++
	return nil, nil
}

func firstKey(m map[string]any, order []string) string {
	for _, k := range order {
		if _, ok := m[k]; ok {
			return k
		}
	}
	for k := range m {
		return k
	}
	return ""
}

func copyDict(d bfDict) bfDict {
	c := bfDict{}
	for k, v := range d {
		if l, ok := v.([]any); ok {
			v = append([]any(nil), l...)
		}
		c[k] = v
	}
	return c
}

func (f bfField) zero() any {
	switch f.kind {
	case 'b':
		return false
	case 's':
		if len(f.choices) > 0 {
			return f.choices[0]
		}
		return ""
	case 'l':
		return make([]any, f.n)
	}
	return int64(0)
}

// check is the SDE's type and range check of one value.
func (f bfField) check(v any) error {
	bad := func(what string) error { return fmt.Errorf("Invalid arg: %s %s: %s", f.name, what, pyRepr(v)) }
	switch f.kind {
	case 'u':
		n, ok := v.(int64)
		if !ok {
			return bad("wants an integer")
		}
		if n < 0 || n > f.max {
			return bad("out of range 0.." + strconv.FormatInt(f.max, 10))
		}
	case 'b':
		if _, ok := v.(bool); !ok {
			return bad("wants True or False")
		}
	case 's':
		str, ok := v.(string)
		if !ok {
			return bad("wants a string")
		}
		if len(f.choices) > 0 && !slices.Contains(f.choices, str) {
			return bad("is not one of " + strings.Join(f.choices, ", "))
		}
	case 'l':
		l, ok := v.([]any)
		if !ok || len(l) != f.n {
			return bad(fmt.Sprintf("wants a list of %d integers", f.n))
		}
		for _, e := range l {
			if n, ok := e.(int64); !ok || n < 0 || n > f.max {
				return bad("has an item out of range")
			}
		}
	}
	return nil
}
