package tofino

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/switchqos"
)

// TM is a Tofino switch's QoS state as the SDE shell's tables hold it
// (hardware-surfaces reference, section 3.4), in cells. The SDE-shell
// driver reads it with a bfrt_python script, turns it into one
// switchqos.Config per port, and writes the difference between two TMs.
//
// Which tables carry which setting:
//
//	lossless priority p   port.port TX/RX_PFC_EN_MAP bit p, tm.port.flowcontrol
//	                      mode_tx/mode_rx PFC, the port's PPG (tm.ppg.cfg) with
//	                      pfc_enable and icos_p, tm.queue.cfg pfc_cos = p on queue p
//	XOFF / XON            the PPG's pool_max_cells / pool_max_cells - hysteresis_cells
//	                      (dynamic_baf DISABLE)
//	alpha                 the PPG's dynamic_baf (alpha/(1+alpha) of the free buffer)
//	headroom              the PPG's pfc_skid_max_cells
//	pools                 tm.pool.cfg: lossless = IG_APP_POOL_1 and EG_APP_POOL_1,
//	                      lossy = IG_APP_POOL_0 and EG_APP_POOL_0
//	scheduler, weights    tm.queue.sched_cfg max_priority (strict: queue q at
//	                      priority q; dwrr: all at 0) and dwrr_weight
//	ECN per queue         the lab program's SwitchEgress.ecn_red table
//	DSCP -> TC            the lab program's SwitchIngress.dscp_tc table
//
// ECN marking and DSCP classification are not TM knobs on Tofino: the P4
// program marks (comparing the queue depth with a threshold) and picks the
// queue. The lab's program must therefore provide these two tables; their
// names are labctl's convention, see docs/provisioning.md.
type TM struct {
	CellBytes, TotalCells int64
	Pools                 map[string]int64 // cells, by TM pool name
	Ports                 []TMPort
	ECN                   map[int]TMRed // by queue; absent: no entry
	DSCP                  map[int]int   // DSCP -> traffic class; absent: no entry
}

// TMPort is one front-panel port's part of the TM.
type TMPort struct {
	Name           string // inventory name, "<conn>/<chnl>"
	DevPort, PGID  int
	TxPFC, RxPFC   int    // PFC enable maps
	ModeTx, ModeRx string // NONE | PFC | PAUSE
	PPGID          int    // the PPG labctl uses for this port's lossless priorities
	PPG            *TMPPG // nil: no such PPG
	Queues         [8]TMQueue
}

// Pipe is the pipe a dev_port belongs to (Tofino 1: dev_port >> 7).
func (p TMPort) Pipe() int { return p.DevPort >> 7 }

// TMQueue is one egress queue (traffic class) of a port.
type TMQueue struct {
	PGQueue, PFCCos int
	MaxPriority     string // LOW, 0..7, HIGH
	Weight          int    // dwrr_weight
}

// TMPPG is a port priority group (tm.ppg.cfg).
type TMPPG struct {
	PFC             bool
	SkidCells       int64
	ICoS            [8]bool
	GuaranteedCells int64
	HysteresisCells int64
	Pool            string
	PoolMaxCells    int64
	BAF             string // dynamic_baf
}

// TMRed is one queue's marking in the program's ecn_red table.
type TMRed struct {
	KminCells, KmaxCells int64
	PmaxPercent          int
}

// Pool names of tm.pool.cfg that profiles' pools map to.
const (
	poolIgLossless = "IG_APP_POOL_1"
	poolEgLossless = "EG_APP_POOL_1"
	poolIgLossy    = "IG_APP_POOL_0"
	poolEgLossy    = "EG_APP_POOL_0"
	bafDisable     = "DISABLE"
)

// TMPools are the pools the driver reads and writes, in script order.
var TMPools = []string{poolIgLossy, poolIgLossless, poolEgLossy, poolEgLossless}

// bafs are tm.ppg.cfg's dynamic_baf choices in the order of switchqos.Alphas.
var bafs = []string{"1.5%", "3%", "6%", "11%", "20%", "33%", "50%", "66%", "80%"}

// BAFForAlpha is the dynamic_baf of an alpha ("" if none matches).
func BAFForAlpha(a float64) string {
	for i, x := range switchqos.Alphas {
		if x == a {
			return bafs[i]
		}
	}
	return ""
}

func alphaForBAF(b string) float64 {
	for i, x := range bafs {
		if x == b {
			return switchqos.Alphas[i]
		}
	}
	return 0
}

// ParsePortName splits an inventory port name "<conn>/<chnl>" (e.g. "1/0")
// into the connector and channel port_hdl_info is keyed by.
func ParsePortName(name string) (conn, chnl int, err error) {
	c, ch, ok := strings.Cut(name, "/")
	conn, err1 := strconv.Atoi(c)
	chnl, err2 := strconv.Atoi(ch)
	if !ok || err1 != nil || err2 != nil || conn < 1 || chnl < 0 {
		return 0, 0, fmt.Errorf("port %q: want <connector>/<channel>, e.g. 1/0", name)
	}
	return conn, chnl, nil
}

// Configs is each port's QoS as the switchqos model sees it. A priority
// counts as lossless only if every part of it is set (PFC maps, mode, PPG
// with pfc_enable and the iCoS, the queue's pfc_cos), so a half-set
// priority is reported as not lossless and gets rewritten.
func (tm *TM) Configs() map[string]switchqos.Config {
	cell := tm.CellBytes
	global := switchqos.Config{Pools: map[string]int64{}, ECN: map[int]switchqos.ECN{}, DSCP: map[int]int{}}
	// A pool of 0 cells holds nothing: it counts as no pool (pools cannot
	// be deleted, so a removed pool is written as 0 cells).
	for name, pair := range map[string][2]string{switchqos.PoolLossless: {poolIgLossless, poolEgLossless}, switchqos.PoolLossy: {poolIgLossy, poolEgLossy}} {
		if v := min(tm.Pools[pair[0]], tm.Pools[pair[1]]); v > 0 {
			global.Pools[name] = v * cell
		}
	}
	for q, r := range tm.ECN {
		global.ECN[q] = switchqos.ECN{KminBytes: r.KminCells * cell, KmaxBytes: r.KmaxCells * cell, PmaxPercent: r.PmaxPercent}
	}
	for d, tc := range tm.DSCP {
		global.DSCP[d] = tc
	}
	out := map[string]switchqos.Config{}
	for _, p := range tm.Ports {
		c := global
		g := p.PPG
		for pr := 0; pr < 8; pr++ {
			c.PFC[pr] = p.TxPFC&(1<<pr) != 0 && p.RxPFC&(1<<pr) != 0 && p.ModeTx == "PFC" && p.ModeRx == "PFC" &&
				g != nil && g.PFC && g.ICoS[pr] && (pr == 0 || p.Queues[pr].PFCCos == pr)
		}
		if g != nil {
			c.HeadroomBytes = g.SkidCells * cell
			if g.BAF == bafDisable {
				c.XoffBytes, c.XonBytes = g.PoolMaxCells*cell, (g.PoolMaxCells-g.HysteresisCells)*cell
			} else {
				c.Alpha = alphaForBAF(g.BAF)
			}
		}
		c.Scheduler = schedulerOf(p.Queues)
		c.Weights = map[int]int{}
		for q, qu := range p.Queues {
			c.Weights[q] = qu.Weight
		}
		out[p.Name] = c
	}
	return out
}

// schedulerOf reads the scheduler from the queues' priorities: all equal is
// DWRR among them, all different is strict priority, anything else is
// reported as "mixed" (which no profile asks for, so it shows as a diff).
func schedulerOf(qs [8]TMQueue) string {
	seen := map[string]bool{}
	for _, q := range qs {
		seen[q.MaxPriority] = true
	}
	switch len(seen) {
	case 1:
		return switchqos.DWRR
	case len(qs):
		return switchqos.Strict
	}
	return "mixed"
}

// With is tm changed to hold want (quantized to cells) on every port; what
// want does not manage stays as it is, what it removes is deleted (a pool
// is set to 0 cells).
func (tm *TM) With(want switchqos.Config) *TM {
	cell := tm.CellBytes
	w := want.Quantize(cell)
	n := tm.clone()
	cells := func(b int64) int64 { return b / cell }
	if v, ok := w.Pools[switchqos.PoolLossless]; ok {
		n.Pools[poolIgLossless], n.Pools[poolEgLossless] = cells(v), cells(v)
	}
	if v, ok := w.Pools[switchqos.PoolLossy]; ok {
		n.Pools[poolIgLossy], n.Pools[poolEgLossy] = cells(v), cells(v)
	}
	for q, e := range w.ECN {
		n.ECN[q] = TMRed{KminCells: cells(e.KminBytes), KmaxCells: cells(e.KmaxBytes), PmaxPercent: e.PmaxPercent}
	}
	for d, tc := range w.DSCP {
		n.DSCP[d] = tc
	}
	for _, q := range w.Remove.ECN {
		delete(n.ECN, q)
	}
	for _, d := range w.Remove.DSCP {
		delete(n.DSCP, d)
	}
	for _, p := range w.Remove.Pools {
		switch p {
		case switchqos.PoolLossless:
			n.Pools[poolIgLossless], n.Pools[poolEgLossless] = 0, 0
		case switchqos.PoolLossy:
			n.Pools[poolIgLossy], n.Pools[poolEgLossy] = 0, 0
		}
	}
	mask := int(w.PFCMask())
	for i := range n.Ports {
		p := &n.Ports[i]
		p.TxPFC, p.RxPFC, p.ModeTx, p.ModeRx = mask, mask, "NONE", "NONE"
		if mask != 0 {
			p.ModeTx, p.ModeRx = "PFC", "PFC"
		}
		for q := range p.Queues {
			p.Queues[q].PFCCos = 0
			if w.PFC[q] {
				p.Queues[q].PFCCos = q
			}
			switch w.Scheduler {
			case switchqos.Strict:
				p.Queues[q].MaxPriority = strconv.Itoa(q)
			case switchqos.DWRR:
				p.Queues[q].MaxPriority = "0"
			}
			if wt, ok := w.Weights[q]; ok && w.Scheduler == switchqos.DWRR {
				p.Queues[q].Weight = wt
			}
		}
		if mask == 0 {
			p.PPG = nil
			continue
		}
		g := TMPPG{Pool: poolIgLossless}
		if p.PPG != nil {
			g = *p.PPG
		}
		g.PFC, g.ICoS, g.Pool = true, w.PFC, poolIgLossless
		if w.HeadroomBytes > 0 {
			g.SkidCells = cells(w.HeadroomBytes)
		}
		if w.Alpha > 0 {
			// Dynamic: the PPG may grow to the lossless pool, and beyond its
			// base limit by the burst absorption factor.
			g.BAF, g.PoolMaxCells = BAFForAlpha(w.Alpha), n.Pools[poolIgLossless]
		} else {
			g.BAF, g.PoolMaxCells, g.HysteresisCells = bafDisable, cells(w.XoffBytes), cells(w.XoffBytes-w.XonBytes)
		}
		p.PPG = &g
	}
	return n
}

func (tm *TM) clone() *TM {
	n := *tm
	n.Pools = map[string]int64{}
	for k, v := range tm.Pools {
		n.Pools[k] = v
	}
	n.ECN = map[int]TMRed{}
	for k, v := range tm.ECN {
		n.ECN[k] = v
	}
	n.DSCP = map[int]int{}
	for k, v := range tm.DSCP {
		n.DSCP[k] = v
	}
	n.Ports = append([]TMPort(nil), tm.Ports...)
	for i := range n.Ports {
		if g := n.Ports[i].PPG; g != nil {
			c := *g
			n.Ports[i].PPG = &c
		}
	}
	return &n
}
