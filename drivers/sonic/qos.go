package sonic

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/switchqos"
)

// The objects labctl owns in CONFIG_DB. Maps are named as SONiC's own
// templates name theirs (AZURE); WRED profiles and schedulers are per
// queue, since labctl's model sets each queue on its own.
const (
	MapName         = "LABCTL"
	LosslessProfile = "labctl_lossless_profile"
	LosslessPool    = "ingress_lossless_pool" // switchqos.PoolLossless
	LossyPool       = "egress_lossy_pool"     // switchqos.PoolLossy
)

// QueueObject names the WRED profile and the scheduler of queue q.
func QueueObject(q int) string { return fmt.Sprintf("LABCTL_Q%d", q) }

// PFC watchdog settings written for each port with a lossless priority
// (PFC_WD): a queue paused longer than detection_time ms is drained
// (action drop) until restoration_time ms without PAUSE.
const (
	WatchdogAction      = "drop"
	WatchdogDetectMs    = "200"
	WatchdogRestorateMs = "200"
)

func poolOf(name string) (table string, ok bool) {
	switch name {
	case switchqos.PoolLossless:
		return LosslessPool, true
	case switchqos.PoolLossy:
		return LossyPool, true
	}
	return "", false
}

// ParseQoS is port's QoS in labctl's model, as db holds it: the lossless
// priorities of its PORT_QOS_MAP (pfc_enable), the DSCP map it names,
// the buffer profile of its first lossless priority group (static_th:
// XOFF, xon: XON, xoff: headroom, dynamic_th: alpha = 2^dynamic_th), the
// two pools, and per queue its WRED profile (green thresholds, with ECN
// on) and scheduler (all STRICT: strict; else dwrr with the DWRR/WRR
// weights).
func ParseQoS(db DB, port string) (switchqos.Config, error) {
	var q switchqos.Config
	pqm := db.entry(TablePortQoSMap, port)
	if v := pqm["pfc_enable"]; v != "" {
		for _, s := range strings.Split(v, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || p < 0 || p > 7 {
				return q, fmt.Errorf("%s|%s: pfc_enable %q: want priorities 0..7 separated by commas", TablePortQoSMap, port, v)
			}
			q.PFC[p] = true
		}
	}
	if name := ref(pqm["dscp_to_tc_map"]); name != "" {
		m := db.entry(TableDSCPToTC, name)
		if m == nil {
			return q, fmt.Errorf("%s|%s: dscp_to_tc_map %q: no such map", TablePortQoSMap, port, name)
		}
		q.DSCP = map[int]int{}
		for d, tc := range m {
			dv, err1 := strconv.Atoi(d)
			tv, err2 := strconv.Atoi(tc)
			if err1 != nil || err2 != nil || dv < 0 || dv > 63 || tv < 0 || tv > 7 {
				return q, fmt.Errorf("%s|%s: %q: %q is not a DSCP -> traffic class entry", TableDSCPToTC, name, d, tc)
			}
			q.DSCP[dv] = tv
		}
	}
	if err := parseBuffer(db, port, &q); err != nil {
		return q, err
	}
	for _, pool := range []string{switchqos.PoolLossless, switchqos.PoolLossy} {
		t, _ := poolOf(pool)
		if e := db.entry(TableBufferPool, t); e != nil {
			size, ok, err := intField(e, "size")
			if err != nil {
				return q, fmt.Errorf("%s|%s: %w", TableBufferPool, t, err)
			}
			if ok {
				if q.Pools == nil {
					q.Pools = map[string]int64{}
				}
				q.Pools[pool] = size
			}
		}
	}
	return q, parseQueues(db, port, &q)
}

// parseBuffer reads the profile of port's first lossless priority group.
func parseBuffer(db DB, port string, q *switchqos.Config) error {
	for _, k := range slices.Sorted(maps.Keys(db[TableBufferPG])) {
		p, rng, ok := strings.Cut(k, keySeparator)
		if !ok || p != port {
			continue
		}
		lo, hi, err := pgRange(rng)
		if err != nil {
			return fmt.Errorf("%s|%s: %w", TableBufferPG, k, err)
		}
		lossless := false
		for prio := lo; prio <= hi; prio++ {
			lossless = lossless || q.PFC[prio]
		}
		if !lossless {
			continue
		}
		name := ref(db[TableBufferPG][k]["profile"])
		prof := db.entry(TableBufferProfile, name)
		if prof == nil {
			return fmt.Errorf("%s|%s: profile %q: no such profile", TableBufferPG, k, name)
		}
		var errs [4]error
		var has [4]bool
		q.XonBytes, has[0], errs[0] = intField(prof, "xon")
		q.HeadroomBytes, has[1], errs[1] = intField(prof, "xoff")
		q.XoffBytes, has[2], errs[2] = intField(prof, "static_th")
		var dyn int64
		dyn, has[3], errs[3] = intField(prof, "dynamic_th")
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("%s|%s: %w", TableBufferProfile, name, err)
			}
		}
		if has[3] {
			if dyn < -8 || dyn > 8 {
				return fmt.Errorf("%s|%s: dynamic_th %d is out of -8..8", TableBufferProfile, name, dyn)
			}
			q.Alpha = math.Ldexp(1, int(dyn))
			q.XoffBytes = 0
		}
		return nil
	}
	return nil
}

// pgRange reads a priority group key's "3" or "3-4".
func pgRange(s string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi = lo
	var err2 error
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || lo < 0 || hi > 7 || lo > hi {
		return 0, 0, fmt.Errorf("priority group %q: want P or P-Q within 0..7", s)
	}
	return lo, hi, nil
}

func parseQueues(db DB, port string, q *switchqos.Config) error {
	types := map[int]string{}
	for queue := 0; queue < 8; queue++ {
		e := db.entry(TableQueue, key(port, strconv.Itoa(queue)))
		if e == nil {
			continue
		}
		if name := ref(e["wred_profile"]); name != "" {
			w := db.entry(TableWREDProfile, name)
			if w == nil {
				return fmt.Errorf("%s|%s|%d: wred_profile %q: no such profile", TableQueue, port, queue, name)
			}
			if ecn := w["ecn"]; ecn != "" && ecn != "ecn_none" && w["wred_green_enable"] == "true" {
				var ecnQ switchqos.ECN
				var err1, err2, err3 error
				ecnQ.KminBytes, _, err1 = intField(w, "green_min_threshold")
				ecnQ.KmaxBytes, _, err2 = intField(w, "green_max_threshold")
				var p int64
				p, _, err3 = intField(w, "green_drop_probability")
				if err := firstErr(err1, err2, err3); err != nil {
					return fmt.Errorf("%s|%s: %w", TableWREDProfile, name, err)
				}
				ecnQ.PmaxPercent = int(p)
				if q.ECN == nil {
					q.ECN = map[int]switchqos.ECN{}
				}
				q.ECN[queue] = ecnQ
			}
		}
		if name := ref(e["scheduler"]); name != "" {
			s := db.entry(TableScheduler, name)
			if s == nil {
				return fmt.Errorf("%s|%s|%d: scheduler %q: no such scheduler", TableQueue, port, queue, name)
			}
			types[queue] = strings.ToUpper(s["type"])
			if t := types[queue]; t == "DWRR" || t == "WRR" {
				w, _, err := intField(s, "weight")
				if err != nil {
					return fmt.Errorf("%s|%s: %w", TableScheduler, name, err)
				}
				if q.Weights == nil {
					q.Weights = map[int]int{}
				}
				q.Weights[queue] = int(w)
			}
		}
	}
	if len(types) > 0 {
		q.Scheduler = switchqos.Strict
		if len(q.Weights) > 0 {
			q.Scheduler = switchqos.DWRR
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Render is have with want set on every port of ports: what the switch
// must hold afterwards. The DSCP map is copied from the one port[0]
// names (with want's changes) into labctl's own map, which every port
// then names; the traffic class maps are the identity (queue = priority
// group = traffic class, as labctl's model has it). Entries of another
// owner that want does not touch stay.
func Render(have DB, ports []string, want switchqos.Config) (DB, error) {
	if len(ports) == 0 {
		return nil, fmt.Errorf("sonic: a switch without ports has no QoS to set")
	}
	for _, p := range ports {
		if err := checkWord("port", p); err != nil {
			return nil, err
		}
	}
	cur, err := ParseQoS(have, ports[0])
	if err != nil {
		return nil, err
	}
	db := have.Clone()
	identity := map[string]string{}
	for i := 0; i < 8; i++ {
		identity[strconv.Itoa(i)] = strconv.Itoa(i)
	}
	for _, t := range []string{TableTCToQueue, TableTCToPG, TablePFCToQueue} {
		db.put(t, MapName, maps.Clone(identity))
	}
	manageDSCP := len(want.DSCP) > 0 || len(want.Remove.DSCP) > 0
	if manageDSCP {
		m := map[string]string{}
		for d, tc := range cur.DSCP {
			m[strconv.Itoa(d)] = strconv.Itoa(tc)
		}
		for d, tc := range want.DSCP {
			m[strconv.Itoa(d)] = strconv.Itoa(tc)
		}
		for _, d := range want.Remove.DSCP {
			delete(m, strconv.Itoa(d))
		}
		if len(m) > 0 {
			db.put(TableDSCPToTC, MapName, m)
		} else { // CONFIG_DB has no empty entries: no map, no classification
			db.del(TableDSCPToTC, MapName)
			manageDSCP = false
			for _, port := range ports {
				delete(db[TablePortQoSMap][port], "dscp_to_tc_map")
			}
		}
	}
	renderBuffer(db, cur, want)
	var lossless []string
	for p, on := range want.PFC {
		if on {
			lossless = append(lossless, strconv.Itoa(p))
		}
	}
	for _, port := range ports {
		for _, f := range []struct{ field, table string }{{"tc_to_queue_map", TableTCToQueue}, {"tc_to_pg_map", TableTCToPG}, {"pfc_to_queue_map", TablePFCToQueue}} {
			db.set(TablePortQoSMap, port, f.field, MapName)
		}
		if manageDSCP {
			db.set(TablePortQoSMap, port, "dscp_to_tc_map", MapName)
		}
		if len(lossless) > 0 {
			db.set(TablePortQoSMap, port, "pfc_enable", strings.Join(lossless, ","))
			db.set(TablePortQoSMap, port, "pfcwd_sw_enable", strings.Join(lossless, ","))
			db.put(TablePFCWatchdog, port, map[string]string{"action": WatchdogAction,
				"detection_time": WatchdogDetectMs, "restoration_time": WatchdogRestorateMs})
		} else {
			delete(db[TablePortQoSMap][port], "pfc_enable")
			delete(db[TablePortQoSMap][port], "pfcwd_sw_enable")
			db.del(TablePFCWatchdog, port)
		}
		renderPGs(db, port, want.PFC)
		renderQueues(db, port, cur, want)
	}
	prune(db)
	return db, nil
}

// prune deletes labctl's WRED profiles and schedulers that no queue
// names any more (a queue whose ECN the profile turned off).
func prune(db DB) {
	used := map[string]bool{}
	for _, e := range db[TableQueue] {
		used[TableWREDProfile+ref(e["wred_profile"])] = true
		used[TableScheduler+ref(e["scheduler"])] = true
	}
	for _, t := range []string{TableWREDProfile, TableScheduler} {
		for q := 0; q < 8; q++ {
			if !used[t+QueueObject(q)] {
				db.del(t, QueueObject(q))
			}
		}
	}
}

// renderBuffer writes labctl's lossless profile and the pools.
func renderBuffer(db DB, cur, want switchqos.Config) {
	headroom := want.HeadroomBytes
	if headroom == 0 {
		headroom = cur.HeadroomBytes
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	prof := map[string]string{"pool": LosslessPool, "xon": i64(want.XonBytes), "xoff": i64(headroom),
		"size": i64(want.XonBytes + headroom)}
	mode := "static"
	if want.Alpha > 0 {
		prof["dynamic_th"] = strconv.Itoa(int(math.Round(math.Log2(want.Alpha))))
		mode = "dynamic"
	} else {
		prof["static_th"] = i64(want.XoffBytes)
	}
	db.put(TableBufferProfile, LosslessProfile, prof)
	db.set(TableBufferPool, LosslessPool, "mode", mode)
	if db[TableBufferPool][LosslessPool]["type"] == "" {
		db.set(TableBufferPool, LosslessPool, "type", "ingress")
	}
	if _, ok := db[TableBufferPool][LosslessPool]["size"]; !ok {
		db.set(TableBufferPool, LosslessPool, "size", i64(cur.Pools[switchqos.PoolLossless]))
	}
	for name, size := range want.Pools {
		t, ok := poolOf(name)
		if !ok {
			continue
		}
		db.set(TableBufferPool, t, "size", i64(size))
		if db[TableBufferPool][t]["type"] == "" {
			db.set(TableBufferPool, t, "type", map[string]string{LosslessPool: "ingress", LossyPool: "egress"}[t])
		}
		if db[TableBufferPool][t]["mode"] == "" {
			db.set(TableBufferPool, t, "mode", "dynamic")
		}
	}
	for _, name := range want.Remove.Pools {
		if t, ok := poolOf(name); ok && t != LosslessPool { // the lossless profile draws from it
			db.del(TableBufferPool, t)
		}
	}
}

// renderPGs gives each lossless priority of port its own priority group
// on labctl's profile, and drops the lossless groups of other priorities.
func renderPGs(db DB, port string, pfc [8]bool) {
	for _, k := range slices.Sorted(maps.Keys(db[TableBufferPG])) {
		p, rng, _ := strings.Cut(k, keySeparator)
		if p != port {
			continue
		}
		lo, hi, err := pgRange(rng)
		if err != nil {
			continue
		}
		prof := db.entry(TableBufferProfile, ref(db[TableBufferPG][k]["profile"]))
		_, losslessProfile := prof["xoff"]
		for prio := lo; prio <= hi; prio++ {
			if pfc[prio] || losslessProfile {
				db.del(TableBufferPG, k) // replaced by one group per lossless priority
				break
			}
		}
	}
	for prio, on := range pfc {
		if on {
			db.put(TableBufferPG, key(port, strconv.Itoa(prio)), map[string]string{"profile": LosslessProfile})
		}
	}
}

func renderQueues(db DB, port string, cur, want switchqos.Config) {
	for queue := 0; queue < 8; queue++ {
		k := key(port, strconv.Itoa(queue))
		obj := QueueObject(queue)
		if want.Scheduler != "" {
			s := map[string]string{"type": "STRICT"}
			if want.Scheduler == switchqos.DWRR {
				w, ok := want.Weights[queue]
				if !ok {
					w = max(cur.Weights[queue], 1)
				}
				s = map[string]string{"type": "DWRR", "weight": strconv.Itoa(w)}
			}
			db.put(TableScheduler, obj, s)
			db.set(TableQueue, k, "scheduler", obj)
		}
		if e, ok := want.ECN[queue]; ok {
			db.put(TableWREDProfile, obj, map[string]string{"ecn": "ecn_all", "wred_green_enable": "true",
				"green_min_threshold": strconv.FormatInt(e.KminBytes, 10), "green_max_threshold": strconv.FormatInt(e.KmaxBytes, 10),
				"green_drop_probability": strconv.Itoa(e.PmaxPercent)})
			db.set(TableQueue, k, "wred_profile", obj)
		}
		if slices.Contains(want.Remove.ECN, queue) && db[TableQueue][k] != nil {
			delete(db[TableQueue][k], "wred_profile")
			if len(db[TableQueue][k]) == 0 {
				db.del(TableQueue, k)
			}
		}
	}
}
