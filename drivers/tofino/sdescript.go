package tofino

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The scripts below are bfrt_python, run with `run_bfshell.sh -b`. They
// use only straight-line calls of the tables' get/mod/add_with_*/delete
// with literal arguments, assignments, subscripts of an entry's data,
// `>>`, print and try/except around gets of entries that may be absent:
// the emulated SDE shell interprets exactly this subset.
//
// What bfrt_python prints for an entry interactively is UNCERTAIN in the
// public sources (and varies by SDE version), so the read-back script
// fetches entries with print_ents=False and prints its own lines, each
// starting with readbackTag, in the layout ParseReadback expects.

const readbackTag = "labctl-tm"

// ReadbackScript is the bfrt_python script that prints a switch's TM state
// for the given ports (inventory names) and the lab program prog.
func ReadbackScript(ports []string, prog string) (string, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# labctl: QoS read-back (generated). Prints %s lines only.", readbackTag)
	w("c = bfrt.tf1.tm.cfg.get(print_ents=False).data")
	w("print('%s', 'cfg', c[b'cell_size_bytes'], c[b'total_cells'])", readbackTag)
	for _, pool := range TMPools {
		w("print('%s', 'pool', '%s', bfrt.tf1.tm.pool.cfg.get(pool='%s', print_ents=False).data[b'size_cells'])", readbackTag, pool, pool)
	}
	for i, name := range ports {
		conn, chnl, err := ParsePortName(name)
		if err != nil {
			return "", err
		}
		if i+1 > 255 {
			return "", fmt.Errorf("more than 255 ports: no PPG id left for %s", name)
		}
		ppg := i + 1
		w("dp = bfrt.port.port_hdl_info.get(CONN_ID=%d, CHNL_ID=%d, print_ents=False).data[b'$DEV_PORT']", conn, chnl)
		w("pc = bfrt.tf1.tm.port.cfg.get(dev_port=dp, print_ents=False).data")
		w("pt = bfrt.port.port.get(DEV_PORT=dp, print_ents=False).data")
		w("fc = bfrt.tf1.tm.port.flowcontrol.get(dev_port=dp, print_ents=False).data")
		w("print('%s', 'port', '%s', dp, pc[b'pg_id'], pt[b'$TX_PFC_EN_MAP'], pt[b'$RX_PFC_EN_MAP'], fc[b'mode_tx'], fc[b'mode_rx'])", readbackTag, name)
		for q := 0; q < 8; q++ {
			key := fmt.Sprintf("pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][%d]", q)
			w("qc = bfrt.tf1.tm.queue.cfg.get(%s, print_ents=False).data", key)
			w("qs = bfrt.tf1.tm.queue.sched_cfg.get(%s, print_ents=False).data", key)
			w("print('%s', 'queue', '%s', %d, pc[b'egress_qid_queues'][%d], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])", readbackTag, name, q, q)
		}
		w("try:")
		w("    g = bfrt.tf1.tm.ppg.cfg.get(pipe=dp >> 7, ppg_id=%d, print_ents=False).data", ppg)
		icos := make([]string, 8)
		for p := range icos {
			icos[p] = fmt.Sprintf("g[b'icos_%d']", p)
		}
		w("    print('%s', 'ppg', '%s', %d, g[b'dev_port'], g[b'pfc_enable'], g[b'pfc_skid_max_cells'], %s, g[b'guaranteed_cells'], g[b'hysteresis_cells'], g[b'pool_id'], g[b'pool_max_cells'], g[b'dynamic_baf'])",
			readbackTag, name, ppg, strings.Join(icos, ", "))
		w("except Exception:")
		w("    print('%s', 'ppg', '%s', %d, 'absent')", readbackTag, name, ppg)
	}
	for q := 0; q < 8; q++ {
		w("try:")
		w("    e = bfrt.%s.get(qid=%d, print_ents=False).data", ECNTable(prog), q)
		w("    print('%s', 'ecn', %d, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])", readbackTag, q)
		w("except Exception:")
		w("    print('%s', 'ecn', %d, 'absent')", readbackTag, q)
	}
	for d := 0; d < 64; d++ {
		w("try:")
		w("    print('%s', 'dscp', %d, bfrt.%s.get(dscp=%d, print_ents=False).data[b'tc'])", readbackTag, d, DSCPTable(prog), d)
		w("except Exception:")
		w("    print('%s', 'dscp', %d, 'absent')", readbackTag, d)
	}
	w("print('%s', 'end')", readbackTag)
	return b.String(), nil
}

// The lab program's tables (see TM), the contract between the driver and
// the P4 program (and what the emulated switch serves):
//
//	ECNTable:  key qid (bit<5>); action set_red(kmin_cells, kmax_cells: bit<19>, pmax_percent: bit<7>)
//	DSCPTable: key dscp (bit<6>); action set_tc(tc: bit<3>)
func ECNTable(prog string) string  { return prog + ".pipe.SwitchEgress.ecn_red" }
func DSCPTable(prog string) string { return prog + ".pipe.SwitchIngress.dscp_tc" }

// WriteScript is the bfrt_python script that changes a switch from one TM
// state to another, touching only what differs (so an apply makes exactly
// the planned changes, and a rollback exactly undoes them). It returns ""
// when nothing differs.
func WriteScript(from, to *TM, prog string) string {
	var lines []string
	w := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	// Pools that shrink first, so that the pools never add up to more
	// than the buffer in between.
	for _, grow := range []bool{false, true} {
		for _, pool := range TMPools {
			a, z := from.Pools[pool], to.Pools[pool]
			if a != z && (z > a) == grow {
				w("bfrt.tf1.tm.pool.cfg.mod(pool='%s', size_cells=%d)", pool, z)
			}
		}
	}
	byName := map[string]TMPort{}
	for _, p := range from.Ports {
		byName[p.Name] = p
	}
	for _, p := range to.Ports {
		f := byName[p.Name]
		dp, pipe := p.DevPort, p.Pipe()
		if f.TxPFC != p.TxPFC || f.RxPFC != p.RxPFC {
			w("bfrt.port.port.mod(DEV_PORT=%d, TX_PFC_EN_MAP=%d, RX_PFC_EN_MAP=%d)", dp, p.TxPFC, p.RxPFC)
		}
		if f.ModeTx != p.ModeTx || f.ModeRx != p.ModeRx {
			w("bfrt.tf1.tm.port.flowcontrol.mod(dev_port=%d, mode_tx='%s', mode_rx='%s', cos_to_icos=[0, 1, 2, 3, 4, 5, 6, 7])", dp, p.ModeTx, p.ModeRx)
		}
		switch {
		case f.PPG == nil && p.PPG != nil:
			w("bfrt.tf1.tm.ppg.cfg.add_with_dev_port(pipe=%d, ppg_id=%d, dev_port=%d, %s)", pipe, p.PPGID, dp, ppgArgs(p.PPG))
		case f.PPG != nil && p.PPG == nil:
			w("bfrt.tf1.tm.ppg.cfg.delete(pipe=%d, ppg_id=%d)", pipe, p.PPGID)
		case f.PPG != nil && *f.PPG != *p.PPG:
			w("bfrt.tf1.tm.ppg.cfg.mod_with_dev_port(pipe=%d, ppg_id=%d, dev_port=%d, %s)", pipe, p.PPGID, dp, ppgArgs(p.PPG))
		}
		for q, qu := range p.Queues {
			fq := f.Queues[q]
			key := fmt.Sprintf("pipe=%d, pg_id=%d, pg_queue=%d", pipe, p.PGID, qu.PGQueue)
			if fq.PFCCos != qu.PFCCos {
				w("bfrt.tf1.tm.queue.cfg.mod(%s, pfc_cos=%d)", key, qu.PFCCos)
			}
			if fq.MaxPriority != qu.MaxPriority || fq.Weight != qu.Weight {
				w("bfrt.tf1.tm.queue.sched_cfg.mod(%s, max_priority='%s', dwrr_weight=%d)", key, qu.MaxPriority, qu.Weight)
			}
		}
	}
	for _, q := range unionKeys(from.ECN, to.ECN) {
		a, had := from.ECN[q]
		z, has := to.ECN[q]
		args := fmt.Sprintf("qid=%d, kmin_cells=%d, kmax_cells=%d, pmax_percent=%d", q, z.KminCells, z.KmaxCells, z.PmaxPercent)
		switch {
		case !had && has:
			w("bfrt.%s.add_with_set_red(%s)", ECNTable(prog), args)
		case had && !has:
			w("bfrt.%s.delete(qid=%d)", ECNTable(prog), q)
		case had && a != z:
			w("bfrt.%s.mod_with_set_red(%s)", ECNTable(prog), args)
		}
	}
	for _, d := range unionKeys(from.DSCP, to.DSCP) {
		a, had := from.DSCP[d]
		z, has := to.DSCP[d]
		switch {
		case !had && has:
			w("bfrt.%s.add_with_set_tc(dscp=%d, tc=%d)", DSCPTable(prog), d, z)
		case had && !has:
			w("bfrt.%s.delete(dscp=%d)", DSCPTable(prog), d)
		case had && a != z:
			w("bfrt.%s.mod_with_set_tc(dscp=%d, tc=%d)", DSCPTable(prog), d, z)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "# labctl: QoS write (generated)\n" + strings.Join(lines, "\n") + "\n"
}

func ppgArgs(g *TMPPG) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pfc_enable=%s, pfc_skid_max_cells=%d", pyBool(g.PFC), g.SkidCells)
	for p, on := range g.ICoS {
		fmt.Fprintf(&b, ", icos_%d=%s", p, pyBool(on))
	}
	fmt.Fprintf(&b, ", guaranteed_cells=%d, hysteresis_cells=%d, pool_id='%s', pool_max_cells=%d, dynamic_baf='%s'",
		g.GuaranteedCells, g.HysteresisCells, g.Pool, g.PoolMaxCells, g.BAF)
	return b.String()
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

func unionKeys[V any](a, b map[int]V) []int {
	set := map[int]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	ks := make([]int, 0, len(set))
	for k := range set {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// ParseReadback reads the read-back script's output (other lines, such as
// the shell's banner, are ignored). It fails if the output stops before
// the end line, so a script cut short is never taken for a state.
func ParseReadback(out string) (*TM, error) {
	tm := &TM{Pools: map[string]int64{}, ECN: map[int]TMRed{}, DSCP: map[int]int{}}
	ports := map[string]int{}
	ended := false
	for n, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != readbackTag {
			continue
		}
		bad := func(what string) error { return fmt.Errorf("read-back line %d: %s: %q", n+1, what, line) }
		ints := func(fs ...string) ([]int64, error) {
			v := make([]int64, len(fs))
			for i, s := range fs {
				x, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, bad("not a number: " + s)
				}
				v[i] = x
			}
			return v, nil
		}
		port := func(name string) (*TMPort, error) {
			i, ok := ports[name]
			if !ok {
				return nil, bad("port not announced")
			}
			return &tm.Ports[i], nil
		}
		args := f[2:]
		switch f[1] {
		case "cfg":
			v, err := want(args, 2, bad, ints)
			if err != nil {
				return nil, err
			}
			tm.CellBytes, tm.TotalCells = v[0], v[1]
		case "pool":
			if len(args) != 2 {
				return nil, bad("want pool name and size")
			}
			v, err := ints(args[1])
			if err != nil {
				return nil, err
			}
			tm.Pools[args[0]] = v[0]
		case "port":
			if len(args) != 7 {
				return nil, bad("want 7 fields")
			}
			v, err := ints(args[1], args[2], args[3], args[4])
			if err != nil {
				return nil, err
			}
			ports[args[0]] = len(tm.Ports)
			tm.Ports = append(tm.Ports, TMPort{Name: args[0], DevPort: int(v[0]), PGID: int(v[1]), TxPFC: int(v[2]), RxPFC: int(v[3]),
				ModeTx: args[5], ModeRx: args[6]})
		case "queue":
			if len(args) != 6 {
				return nil, bad("want 6 fields")
			}
			p, err := port(args[0])
			if err != nil {
				return nil, err
			}
			v, err := ints(args[1], args[2], args[3], args[5])
			if err != nil {
				return nil, err
			}
			if v[0] < 0 || v[0] > 7 {
				return nil, bad("queue out of range")
			}
			p.Queues[v[0]] = TMQueue{PGQueue: int(v[1]), PFCCos: int(v[2]), MaxPriority: args[4], Weight: int(v[3])}
		case "ppg":
			if len(args) < 3 {
				return nil, bad("too short")
			}
			p, err := port(args[0])
			if err != nil {
				return nil, err
			}
			id, err := ints(args[1])
			if err != nil {
				return nil, err
			}
			p.PPGID = int(id[0])
			if args[2] == "absent" {
				continue
			}
			if g, err := parsePPG(args[2:], bad, ints); err != nil {
				return nil, err
			} else {
				p.PPG = g
			}
		case "ecn":
			if len(args) == 2 && args[1] == "absent" {
				continue
			}
			v, err := want(args, 4, bad, ints)
			if err != nil {
				return nil, err
			}
			tm.ECN[int(v[0])] = TMRed{KminCells: v[1], KmaxCells: v[2], PmaxPercent: int(v[3])}
		case "dscp":
			if len(args) == 2 && args[1] == "absent" {
				continue
			}
			v, err := want(args, 2, bad, ints)
			if err != nil {
				return nil, err
			}
			tm.DSCP[int(v[0])] = int(v[1])
		case "end":
			ended = true
		default:
			return nil, bad("unknown record")
		}
	}
	if !ended {
		return nil, fmt.Errorf("read-back output ends early (no %q line)", readbackTag+" end")
	}
	if tm.CellBytes <= 0 {
		return nil, fmt.Errorf("read-back: no cell size")
	}
	return tm, nil
}

func want(args []string, n int, bad func(string) error, ints func(...string) ([]int64, error)) ([]int64, error) {
	if len(args) != n {
		return nil, bad(fmt.Sprintf("want %d fields", n))
	}
	return ints(args...)
}

// parsePPG reads: dev_port pfc_enable skid icos_0..7 guaranteed hysteresis pool_id pool_max baf.
func parsePPG(a []string, bad func(string) error, ints func(...string) ([]int64, error)) (*TMPPG, error) {
	if len(a) != 16 {
		return nil, bad("want 16 PPG fields")
	}
	pb := func(s string) (bool, error) {
		switch s {
		case "True":
			return true, nil
		case "False":
			return false, nil
		}
		return false, bad("not a bool: " + s)
	}
	g := &TMPPG{Pool: a[13], BAF: a[15]}
	var err error
	if g.PFC, err = pb(a[1]); err != nil {
		return nil, err
	}
	for p := 0; p < 8; p++ {
		if g.ICoS[p], err = pb(a[3+p]); err != nil {
			return nil, err
		}
	}
	v, err := ints(a[2], a[11], a[12], a[14])
	if err != nil {
		return nil, err
	}
	g.SkidCells, g.GuaranteedCells, g.HysteresisCells, g.PoolMaxCells = v[0], v[1], v[2], v[3]
	return g, nil
}
